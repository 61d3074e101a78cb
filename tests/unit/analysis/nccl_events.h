// Synthetic NCCL calls for the analysis tests: probes shaped like the nccl catalog's
// (count x datatype `bytes`) and calls stamped with a communicator, as ingest does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/call_event.h"

namespace eacgm::analysis::testing {

constexpr std::uint64_t kFloat32 = 7;  // ncclFloat32
constexpr std::uint64_t kFloat16 = 6;  // ncclFloat16

// A probe of `function` in the nccl domain whose args are (count, datatype) and whose
// `bytes` is count x datatype size.
inline std::shared_ptr<const ProbeInfo> nccl_probe(const std::string& function) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->symbol = function;
  p->spec.name = function;
  p->spec.domain = "nccl";
  p->spec.ret = ReturnKind::kInt32;
  for (const char* name : {"count", "datatype"}) {
    ArgSpec a;
    a.name = name;
    p->spec.args.push_back(a);
  }
  p->spec.derived = {{"bytes", DerivedArg::Op::kTimesNcclDtype, "count", "datatype"}};
  return p;
}

// A probe of `function` in the nccl domain without `bytes` (communicator calls).
inline std::shared_ptr<const ProbeInfo> nccl_plain_probe(const std::string& function) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->symbol = function;
  p->spec.name = function;
  p->spec.domain = "nccl";
  p->spec.ret = ReturnKind::kInt32;
  return p;
}

struct NcclCall {
  std::uint64_t comm_id = 0xc0;
  std::int32_t rank = 0;
  std::int32_t nranks = 2;
  std::uint64_t ts_ns = 1'000'000'000;
  std::uint64_t dur_ns = 1000;
  std::uint64_t count = 1024;
  std::uint64_t datatype = kFloat32;
  std::int64_t ret = 0;
};

// One call of `probe` as ingest hands it on: pid 1000 + rank, stamped with its
// communicator.
inline CallEvent nccl_call(const std::shared_ptr<const ProbeInfo>& probe, const NcclCall& c) {
  CallEvent e;
  e.ts_ns = c.ts_ns;
  e.dur_ns = c.dur_ns;
  e.pid = 1000 + static_cast<std::uint32_t>(c.rank);
  e.tid = e.pid;
  e.probe = probe;
  e.has_exit = true;
  e.ret = c.ret;
  e.nargs = probe->spec.args.empty() ? 0 : 2;
  e.args[0] = c.count;
  e.args[1] = c.datatype;
  e.nccl_comm_id = c.comm_id;
  e.nccl_rank = c.rank;
  e.nccl_nranks = c.nranks;
  return e;
}

}  // namespace eacgm::analysis::testing
