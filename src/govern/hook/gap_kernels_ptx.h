// The hook's two gap-measurement kernels as PTX, JIT-compiled by the driver
// (dispatch_gap.cpp): eacgm_spin(ns) holds its stream for `ns` nanoseconds of the GPU's
// global timer, eacgm_empty() does nothing. bench/programs/event_pair_cost.cpp launches
// the spin kernel as its workload.
#pragma once

namespace eacgm::govern::hook {

inline constexpr char kGapKernelsPtx[] = R"(.version 7.0
.target sm_70
.address_size 64
.visible .entry eacgm_spin(.param .u64 ns)
{
  .reg .u64 %t0, %t1, %d, %lim;
  .reg .pred %p;
  ld.param.u64 %lim, [ns];
  mov.u64 %t0, %globaltimer;
SPIN:
  mov.u64 %t1, %globaltimer;
  sub.u64 %d, %t1, %t0;
  setp.lt.u64 %p, %d, %lim;
  @%p bra SPIN;
  ret;
}
.visible .entry eacgm_empty()
{
  ret;
}
)";

}  // namespace eacgm::govern::hook
