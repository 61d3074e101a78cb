// nccl-tests' size and bus-bandwidth factor per collective.
#include "analysis/nccl_bandwidth.h"

#include <array>

namespace eacgm::analysis {
namespace {

struct Named {
  std::string_view function;
  NcclCollective kind;
};

constexpr std::array<Named, 11> kFunctions = {{
    {"ncclAllReduce", NcclCollective::kAllReduce},
    {"ncclReduceScatter", NcclCollective::kReduceScatter},
    {"ncclAllGather", NcclCollective::kAllGather},
    {"ncclAlltoAll", NcclCollective::kAlltoAll},
    {"ncclBroadcast", NcclCollective::kBroadcast},
    {"ncclBcast", NcclCollective::kBroadcast},
    {"ncclReduce", NcclCollective::kReduce},
    {"ncclGather", NcclCollective::kGather},
    {"ncclScatter", NcclCollective::kScatter},
    {"ncclSend", NcclCollective::kSend},
    {"ncclRecv", NcclCollective::kRecv},
}};

// Whether S is the per-rank (or per-peer) count times nranks (nccl-tests' GetBw
// functions multiply by nranks for these).
bool scales_with_ranks(NcclCollective kind) {
  switch (kind) {
    case NcclCollective::kReduceScatter:
    case NcclCollective::kAllGather:
    case NcclCollective::kAlltoAll:
    case NcclCollective::kGather:
    case NcclCollective::kScatter:
      return true;
    default:
      return false;
  }
}

}  // namespace

NcclCollective nccl_collective_of(std::string_view function) {
  if (!function.starts_with("nccl")) return NcclCollective::kNone;
  for (const auto& f : kFunctions) {
    if (f.function == function) return f.kind;
  }
  return NcclCollective::kNone;
}

std::string_view nccl_collective_name(NcclCollective kind) {
  switch (kind) {
    case NcclCollective::kNone:
      return "";
    case NcclCollective::kAllReduce:
      return "AllReduce";
    case NcclCollective::kReduceScatter:
      return "ReduceScatter";
    case NcclCollective::kAllGather:
      return "AllGather";
    case NcclCollective::kAlltoAll:
      return "AlltoAll";
    case NcclCollective::kBroadcast:
      return "Broadcast";
    case NcclCollective::kReduce:
      return "Reduce";
    case NcclCollective::kGather:
      return "Gather";
    case NcclCollective::kScatter:
      return "Scatter";
    case NcclCollective::kSend:
      return "Send";
    case NcclCollective::kRecv:
      return "Recv";
  }
  return "";
}

bool nccl_is_collective(NcclCollective kind) {
  return kind != NcclCollective::kNone && kind != NcclCollective::kSend && kind != NcclCollective::kRecv;
}

std::optional<std::uint64_t> nccl_algorithm_bytes(NcclCollective kind, std::uint64_t call_bytes,
                                                  std::int32_t nranks) {
  if (kind == NcclCollective::kNone) return std::nullopt;
  if (!scales_with_ranks(kind)) return call_bytes;
  if (nranks < 1) return std::nullopt;
  std::uint64_t total = 0;
  if (__builtin_mul_overflow(call_bytes, static_cast<std::uint64_t>(nranks), &total)) return std::nullopt;
  return total;
}

std::optional<double> nccl_bus_factor(NcclCollective kind, std::int32_t nranks) {
  switch (kind) {
    case NcclCollective::kNone:
      return std::nullopt;
    case NcclCollective::kBroadcast:
    case NcclCollective::kReduce:
    case NcclCollective::kSend:
    case NcclCollective::kRecv:
      return 1.0;
    default:
      break;
  }
  if (nranks < 1) return std::nullopt;
  const double n = nranks;
  if (kind == NcclCollective::kAllReduce) return 2.0 * (n - 1.0) / n;
  return (n - 1.0) / n;
}

std::optional<double> bytes_per_second(double bytes, std::uint64_t ns) {
  if (ns == 0) return std::nullopt;
  return bytes * 1e9 / static_cast<double>(ns);
}

}  // namespace eacgm::analysis
