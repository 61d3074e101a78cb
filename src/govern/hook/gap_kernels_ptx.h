// The hook's two gap-measurement kernels as PTX, JIT-compiled by the driver
// (dispatch_gap.cpp): eacgm_spin(ns) holds its stream for `ns` nanoseconds of the GPU's
// global timer, eacgm_store() writes one word to the module's own global (as every kernel
// of a program writes memory, whose completion an event pair around it waits for).
// bench/programs/event_pair_cost.cpp launches the spin kernel as its workload.
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
.global .align 4 .u32 eacgm_sink;
.visible .entry eacgm_store()
{
  .reg .u32 %v;
  mov.u32 %v, 1;
  st.global.u32 [eacgm_sink], %v;
  ret;
}
)";

}  // namespace eacgm::govern::hook
