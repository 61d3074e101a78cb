// Each tenant's GPU memory per device, shared by all its processes (the pod manager's
// account): a reservation is granted while the tenant stays within its limit, and a
// process's share is given back when it frees or when its connection ends (exit, crash).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

namespace eacgm::govern::sched {

class MemoryAccounts {
 public:
  using ClientId = std::uint64_t;

  // Adds `bytes` for `client` of `tenant` on `device` if the tenant stays within `limit`
  // (0: none). Returns whether it was added.
  bool reserve(ClientId client, const std::string& tenant, int device, std::uint64_t bytes,
               std::uint64_t limit);
  // Subtracts, never more than the client itself added.
  void release(ClientId client, int device, std::uint64_t bytes);
  // Gives back everything the client holds.
  void drop_client(ClientId client);

  std::uint64_t used(const std::string& tenant, int device) const;

 private:
  struct Held {
    std::string tenant;
    std::uint64_t bytes = 0;
  };
  std::map<std::pair<std::string, int>, std::uint64_t> tenant_used_;
  std::map<std::pair<ClientId, int>, Held> client_held_;
};

}  // namespace eacgm::govern::sched
