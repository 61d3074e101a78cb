// Tenant memory accounts with per-client contributions (see memory_accounts.h).
#include "govern/sched/memory_accounts.h"

#include <algorithm>

namespace eacgm::govern::sched {

bool MemoryAccounts::reserve(ClientId client, const std::string& tenant, int device, std::uint64_t bytes,
                             std::uint64_t limit) {
  std::uint64_t& used = tenant_used_[{tenant, device}];
  if (limit != 0 && (bytes > limit || used > limit - bytes)) return false;
  used += bytes;
  Held& h = client_held_[{client, device}];
  h.tenant = tenant;
  h.bytes += bytes;
  return true;
}

void MemoryAccounts::release(ClientId client, int device, std::uint64_t bytes) {
  auto it = client_held_.find({client, device});
  if (it == client_held_.end()) return;
  std::uint64_t n = std::min(bytes, it->second.bytes);
  it->second.bytes -= n;
  std::uint64_t& used = tenant_used_[{it->second.tenant, device}];
  used -= std::min(used, n);
  if (it->second.bytes == 0) client_held_.erase(it);
}

void MemoryAccounts::drop_client(ClientId client) {
  for (auto it = client_held_.begin(); it != client_held_.end();) {
    if (it->first.first != client) {
      ++it;
      continue;
    }
    std::uint64_t& used = tenant_used_[{it->second.tenant, it->first.second}];
    used -= std::min(used, it->second.bytes);
    it = client_held_.erase(it);
  }
}

std::uint64_t MemoryAccounts::used(const std::string& tenant, int device) const {
  auto it = tenant_used_.find({tenant, device});
  return it == tenant_used_.end() ? 0 : it->second;
}

}  // namespace eacgm::govern::sched
