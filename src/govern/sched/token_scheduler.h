// One GPU's time-token scheduler (one instance per GPU): at most one tenant holds the
// token at a time; every process of that tenant may launch while it holds it. When a
// slice ends, the token passes on once the holder's processes have reported back (their
// queued work has drained) or a grace period of one max_slice has passed, so the next
// holder's slice does not start under the last one's tail. The next
// holder is the waiting tenant furthest below its request (usage / request over the
// sliding window), never one at its limit. Pure logic on a clock the caller passes in,
// so tests run it on simulated time.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "govern/sched/usage_window.h"

namespace eacgm::govern::sched {

using ClientId = std::uint64_t;

struct TenantShare {
  std::string name;
  double request = 0;
  double limit = 1;
};

struct Grant {
  ClientId client = 0;
  std::uint32_t slice_us = 0;
};

struct TenantTimes {
  std::string name;
  double share = 0;       // busy / window, now
  Micros busy_total = 0;  // all time billed
  Micros wait_total = 0;  // time its requests waited for the token
  std::uint64_t grants = 0;
  std::size_t waiting = 0;  // clients waiting now
  bool holder = false;
};

class GpuScheduler {
 public:
  GpuScheduler(Micros window, Micros min_slice, Micros max_slice);

  // Tenants and their shares (a reload keeps each remaining tenant's usage).
  void configure(const std::vector<TenantShare>& tenants, Micros window, Micros min_slice, Micros max_slice);

  // A client of `tenant` asks for time. `used_us` is what its previous slice took (its
  // overrun past that slice is billed); `predicted_us` its next burst (0: unknown).
  // Grants decided now are appended to `out` (this client's may be among them).
  void request(ClientId client, const std::string& tenant, std::uint32_t used_us, std::uint32_t predicted_us,
               Micros now, std::vector<Grant>* out);
  // A client went away: its waiting request is dropped.
  void drop_client(ClientId client, Micros now, std::vector<Grant>* out);
  // Called at next_deadline(): ends a slice, hands the token on.
  void tick(Micros now, std::vector<Grant>* out);
  // When tick must run next; 0 when nothing is pending.
  Micros next_deadline() const { return deadline_; }

  std::vector<TenantTimes> times(Micros now);
  bool known(const std::string& tenant) const { return tenants_.count(tenant) != 0; }

 private:
  struct Tenant {
    TenantShare share;
    UsageWindow usage{0};
    std::uint64_t grants = 0;
    Micros wait_total = 0;
    Micros last_request = -(1ll << 62);
  };
  struct Waiter {
    ClientId client;
    std::string tenant;
    std::uint32_t predicted_us;
    Micros since;
  };
  struct ClientSlice {
    Micros granted_at;
    Micros ends_at;
    std::string tenant;
  };

  void release_token(Micros now);
  // Whether a process that shared the holder's slice has not reported back since.
  bool holder_draining() const;
  void dispatch(Micros now, std::vector<Grant>* out);
  void grant_to(const std::string& tenant, Micros now, std::vector<Grant>* out);
  void update_deadline(Micros now);

  Micros window_, min_slice_, max_slice_;
  std::map<std::string, Tenant> tenants_;
  std::deque<Waiter> waiting_;
  std::map<ClientId, ClientSlice> slices_;
  bool held_ = false;
  std::string holder_;
  Micros grant_start_ = 0;
  Micros slice_end_ = 0;
  Micros deadline_ = 0;
};

}  // namespace eacgm::govern::sched
