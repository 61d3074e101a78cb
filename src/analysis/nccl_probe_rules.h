// NcclProbeRules: what the NCCL aggregators need of a probe (its `bytes` rule, which
// collective it is, its function's interned index), resolved once per probe so the
// per-call path does no name lookups and no allocation.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/nccl_bandwidth.h"
#include "core/call_bytes.h"
#include "core/call_event.h"

namespace eacgm::analysis {

struct NcclProbeRule {
  BytesRule bytes;                              // none outside the nccl domain
  NcclCollective kind = NcclCollective::kNone;  // from the function name
  std::uint32_t function = 0;                   // index for function_name(); probes with bytes only
  // The call's arguments by role (their index in CallEvent::args; kNoArg: the spec has
  // none): the element count, datatype, reduction op, and root or peer rank.
  static constexpr std::uint8_t kNoArg = 0xff;
  std::uint8_t count_arg = kNoArg;
  std::uint8_t dtype_arg = kNoArg;
  std::uint8_t op_arg = kNoArg;
  std::uint8_t peer_arg = kNoArg;
};

// Issued: ncclSuccess, or ncclInProgress (7) from a non-blocking communicator, whose
// operation goes on in the background.
inline bool nccl_call_issued(const CallEvent& e) {
  if (!e.has_exit) return false;
  const auto r = static_cast<std::int32_t>(e.ret);
  return r == 0 || r == 7;
}

class NcclProbeRules {
 public:
  // The rule of event.probe (not null). Probes are pinned (kept alive) while they are
  // cached, so a cached address is never another probe's.
  const NcclProbeRule& of(const CallEvent& event);
  const std::string& function_name(std::uint32_t index) const { return functions_[index]; }

 private:
  static constexpr std::size_t kMaxPinnedProbes = 4096;
  std::uint32_t intern(const std::string& function);

  std::unordered_map<const ProbeInfo*, NcclProbeRule> by_probe_;
  std::vector<std::shared_ptr<const ProbeInfo>> pinned_;
  std::vector<std::string> functions_;
  NcclProbeRule scratch_;  // past the pin cap: resolved again each call
};

}  // namespace eacgm::analysis
