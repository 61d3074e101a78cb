// Communicator table for NCCL calls (bounded LRU per (pid, handle)).
#include "ingest/nccl_comms.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "core/nccl_types.h"

namespace eacgm::ingest {
namespace {

// A captured argument by name; nullopt when the probe has no such arg or it faulted.
std::optional<std::uint64_t> arg(const CallEvent& e, std::string_view name) {
  const auto& args = e.probe->spec.args;
  for (std::size_t i = 0; i < args.size() && i < e.nargs; ++i) {
    if (args[i].name != name) continue;
    if (e.fault_mask & (1u << i)) return std::nullopt;
    return e.args[i];
  }
  return std::nullopt;
}

std::int32_t as_int(std::optional<std::uint64_t> v) {
  return v ? static_cast<std::int32_t>(static_cast<std::uint32_t>(*v)) : -1;
}

// ncclSuccess, or ncclInProgress from a non-blocking communicator whose creation
// goes on in the background: either way the handle is the communicator's from now on.
bool created(const CallEvent& e) {
  if (!e.has_exit) return false;
  auto r = static_cast<std::int32_t>(e.ret);
  return r == 0 || r == 7;
}

bool succeeded(const CallEvent& e) { return e.has_exit && static_cast<std::int32_t>(e.ret) == 0; }

void stamp(CallEvent& e, const NcclCommInfo& info) {
  e.nccl_rank = info.rank;
  e.nccl_nranks = info.nranks;
  e.nccl_comm_id = info.comm_id;
}

}  // namespace

NcclCommTable::NcclCommTable(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

NcclCommInfo* NcclCommTable::find(const Key& k) {
  auto it = map_.find(k);
  if (it == map_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return &it->second->second;
}

NcclCommInfo& NcclCommTable::put(const Key& k) {
  if (NcclCommInfo* existing = find(k)) return *existing;
  if (map_.size() >= capacity_) {
    map_.erase(lru_.back().first);
    lru_.pop_back();
    ++evictions_;
  }
  lru_.emplace_front(k, NcclCommInfo{});
  map_.emplace(k, lru_.begin());
  return lru_.front().second;
}

void NcclCommTable::erase(const Key& k) {
  auto it = map_.find(k);
  if (it == map_.end()) return;
  lru_.erase(it->second);
  map_.erase(it);
}

std::vector<std::uint32_t> NcclCommTable::pids() const {
  std::vector<std::uint32_t> out;
  for (const auto& [key, value] : lru_) {
    if (std::find(out.begin(), out.end(), key.pid) == out.end()) out.push_back(key.pid);
  }
  return out;
}

void NcclCommTable::forget(std::uint32_t pid) {
  for (auto it = lru_.begin(); it != lru_.end();) {
    if (it->first.pid == pid) {
      map_.erase(it->first);
      it = lru_.erase(it);
    } else {
      ++it;
    }
  }
}

void NcclCommTable::enrich(CallEvent& e) {
  e.nccl_rank = -1;
  e.nccl_nranks = -1;
  e.nccl_comm_id = 0;
  if (!e.probe || e.probe->spec.domain != "nccl") return;
  const std::string_view fn = e.function();
  auto comm = arg(e, "comm");

  if (fn == "ncclCommInitRank" || fn == "ncclCommInitRankConfig" || fn == "ncclCommInitRankScalable" ||
      fn == "ncclCommInitAll") {
    NcclCommInfo info;
    if (fn == "ncclCommInitAll") {
      info.rank = 0;  // `comm` is comms[0]
      info.nranks = as_int(arg(e, "ndev"));
    } else {
      info.rank = as_int(arg(e, "rank"));
      info.nranks = as_int(arg(e, "nranks"));
      auto w0 = arg(e, "unique_id_0"), w1 = arg(e, "unique_id_1");
      if (w0 && w1) info.comm_id = nccl_comm_id(*w0, *w1);
    }
    stamp(e, info);
    if (created(e) && comm && *comm != 0) put({e.pid, *comm}) = info;
    return;
  }
  if (!comm || *comm == 0) return;
  const Key key{e.pid, *comm};
  if (fn == "ncclCommCount" || fn == "ncclCommUserRank") {
    if (succeeded(e)) {
      auto value = arg(e, fn == "ncclCommCount" ? "count" : "rank");
      if (value) {
        NcclCommInfo& info = put(key);
        (fn == "ncclCommCount" ? info.nranks : info.rank) = as_int(value);
      }
    }
  }
  if (NcclCommInfo* info = find(key)) stamp(e, *info);
  if ((fn == "ncclCommDestroy" || fn == "ncclCommAbort") && succeeded(e)) erase(key);
}

}  // namespace eacgm::ingest
