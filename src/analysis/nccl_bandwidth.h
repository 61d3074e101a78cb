// Algorithm and bus bandwidth of NCCL calls as nccl-tests defines them (its
// doc/PERFORMANCE.md), from the `bytes` our NCCL catalog derives for each call.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace eacgm::analysis {

// The NCCL operations that move data. ncclBcast is the in-place ncclBroadcast.
enum class NcclCollective : std::uint8_t {
  kNone,
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kAlltoAll,
  kBroadcast,
  kReduce,
  kGather,
  kScatter,
  kSend,
  kRecv,
};
inline constexpr std::size_t kNcclCollectiveKinds = 11;

// By NCCL function name ("ncclAllReduce", ...); kNone for anything else.
NcclCollective nccl_collective_of(std::string_view function);
// "AllReduce", "Broadcast", ...; "" for kNone.
std::string_view nccl_collective_name(NcclCollective kind);
// Whether every rank of the communicator takes part in each call, in the same order on
// every rank (NCCL's rule for collectives): all but send and receive.
bool nccl_is_collective(NcclCollective kind);

// nccl-tests' size S of one call, in bytes, from the catalog's `bytes` (element count x
// datatype size of the count argument each function takes):
//   AllReduce, Broadcast, Reduce, Send, Recv: `count` is the whole buffer, S = bytes;
//   ReduceScatter (`recvcount`), AllGather (`sendcount`), AlltoAll, Gather, Scatter
//   (`count`, per rank or per peer): S = bytes x nranks, the total array.
// nullopt when nranks is needed and not known (< 1), or S overflows.
std::optional<std::uint64_t> nccl_algorithm_bytes(NcclCollective kind, std::uint64_t call_bytes,
                                                  std::int32_t nranks);

// busbw / algbw: 2(n-1)/n for AllReduce; (n-1)/n for ReduceScatter, AllGather,
// AlltoAll, Gather, Scatter; 1 for Broadcast, Reduce, Send, Recv. nullopt when nranks
// is needed and not known (< 1), or for kNone.
std::optional<double> nccl_bus_factor(NcclCollective kind, std::int32_t nranks);

// bytes / seconds; nullopt when `ns` is 0.
std::optional<double> bytes_per_second(double bytes, std::uint64_t ns);

// Sums of S (or S x the bus factor) and of the time that moved them: nccl-tests'
// bandwidth over several calls is their ratio (for calls of one size, S / mean time).
struct NcclThroughput {
  std::uint64_t calls = 0;  // additions
  double bytes = 0;
  std::uint64_t ns = 0;
  void add(double b, std::uint64_t t) {
    ++calls;
    bytes += b;
    ns += t;
  }
  std::optional<double> bandwidth() const { return bytes_per_second(bytes, ns); }
};

}  // namespace eacgm::analysis
