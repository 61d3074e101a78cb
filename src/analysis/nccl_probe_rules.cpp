// Per-probe rules of the NCCL aggregators, cached by probe.
#include "analysis/nccl_probe_rules.h"

namespace eacgm::analysis {

std::uint32_t NcclProbeRules::intern(const std::string& function) {
  for (std::size_t i = 0; i < functions_.size(); ++i) {
    if (functions_[i] == function) return static_cast<std::uint32_t>(i);
  }
  functions_.push_back(function);
  return static_cast<std::uint32_t>(functions_.size() - 1);
}

const NcclProbeRule& NcclProbeRules::of(const CallEvent& event) {
  const ProbeInfo* probe = event.probe.get();
  if (auto it = by_probe_.find(probe); it != by_probe_.end()) return it->second;
  NcclProbeRule rule;
  if (probe->spec.domain == "nccl") {
    rule.bytes = BytesRule::of(probe->spec);
    rule.kind = nccl_collective_of(probe->function);
    if (rule.bytes.has_bytes()) rule.function = intern(probe->function);
    for (std::size_t i = 0; i < probe->spec.args.size() && i < NcclProbeRule::kNoArg; ++i) {
      const std::string& name = probe->spec.args[i].name;
      const auto index = static_cast<std::uint8_t>(i);
      if (name == "count" || name == "recvcount" || name == "sendcount") rule.count_arg = index;
      if (name == "datatype") rule.dtype_arg = index;
      if (name == "op") rule.op_arg = index;
      if (name == "peer" || name == "root") rule.peer_arg = index;
    }
  }
  if (pinned_.size() < kMaxPinnedProbes) {
    pinned_.push_back(event.probe);
    return by_probe_.emplace(probe, rule).first->second;
  }
  scratch_ = rule;
  return scratch_;
}

}  // namespace eacgm::analysis
