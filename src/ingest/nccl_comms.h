// Names NCCL calls by communicator: learns (pid, ncclComm_t) -> rank, size and id from
// the calls that create or describe communicators, and stamps later calls with them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

#include "core/call_event.h"

namespace eacgm::ingest {

struct NcclCommInfo {
  std::int32_t rank = -1;     // -1: unknown
  std::int32_t nranks = -1;   // -1: unknown
  std::uint64_t comm_id = 0;  // 0: unknown (core/nccl_types.h nccl_comm_id)
};

class NcclCommTable {
 public:
  // Communicators remembered at most; the least recently used one makes room.
  static constexpr std::size_t kDefaultCapacity = 4096;
  explicit NcclCommTable(std::size_t capacity = kDefaultCapacity);

  // Sets (or clears) e.nccl_rank/nccl_nranks/nccl_comm_id. Learns from successful
  // ncclCommInitRank*, ncclCommInitAll, ncclCommCount and ncclCommUserRank, and
  // forgets communicators that ncclCommDestroy/ncclCommAbort freed (handles are reused).
  // Creation calls are stamped with what they tried to create, failed or not.
  void enrich(CallEvent& e);

  // Drops a process's communicators (it exec'd: its handles name nothing any more).
  void forget(std::uint32_t pid);

  // Processes it keeps communicators of.
  std::vector<std::uint32_t> pids() const;

  std::size_t size() const { return map_.size(); }
  std::uint64_t evictions() const { return evictions_; }

 private:
  struct Key {
    std::uint32_t pid;
    std::uint64_t comm;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::uint64_t>()(k.comm * 0x9e3779b97f4a7c15ull ^ k.pid);
    }
  };
  using Lru = std::list<std::pair<Key, NcclCommInfo>>;

  NcclCommInfo* find(const Key& k);
  NcclCommInfo& put(const Key& k);
  void erase(const Key& k);

  std::size_t capacity_;
  Lru lru_;  // most recently used first
  std::unordered_map<Key, Lru::iterator, KeyHash> map_;
  std::uint64_t evictions_ = 0;
};

}  // namespace eacgm::ingest
