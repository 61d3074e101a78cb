// The hook's connection to eacgm-sched: one per process, request/reply under a lock that
// is itself waited on with a timeout, reconnection with exponential back-off, and a
// clear line on stderr when the scheduler refuses the process. Never throws; every
// call returns within the configured timeout.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

#include "govern/protocol/codec.h"

namespace eacgm::govern::hook {

struct SchedClientConfig {
  std::string socket_path;   // EACGM_SCHED_SOCKET
  std::string tcp_address;   // EACGM_SCHED_ADDR (host:port), used when no socket path
  std::string tenant;        // EACGM_TENANT
  std::string secret;        // EACGM_TENANT_SECRET (TCP)
  int timeout_ms = 10000;    // EACGM_SCHED_TIMEOUT_MS
  bool fail_closed = false;  // EACGM_FAIL_CLOSED=1
  bool configured() const { return !socket_path.empty() || !tcp_address.empty(); }
};

// Reads the variables above; bad values are reported on stderr and replaced by defaults.
SchedClientConfig sched_config_from_env();

class SchedClient {
 public:
  void configure(const SchedClientConfig& cfg) { cfg_ = cfg; }
  const SchedClientConfig& config() const { return cfg_; }

  // False when the scheduler could not be asked (unreachable, refused, timed out).
  bool token(int device, std::uint32_t used_us, std::uint32_t predicted_us, std::uint32_t* slice_us);
  bool mem_reserve(int device, std::uint64_t bytes, bool* granted);
  void mem_release(int device, std::uint64_t bytes);
  bool mem_query(int device, std::uint64_t* used, std::uint64_t* limit);
  // The tenant's per-GPU memory limit from the scheduler's greeting (0: none or unknown).
  std::uint64_t memory_limit();

  // In a child after fork: the connection is the parent's; forget it without a word on it.
  void after_fork_child();

 private:
  bool transact(const protocol::Message& request, protocol::Message* reply, bool expect_reply);
  bool connect_locked(std::int64_t deadline_us);
  bool send_locked(const protocol::Message& m, std::uint32_t id, std::int64_t deadline_us);
  bool receive_locked(std::uint32_t id, protocol::Message* reply, std::int64_t deadline_us);
  void disconnect_locked(bool refused);

  SchedClientConfig cfg_;
  std::timed_mutex mu_;
  int fd_ = -1;
  std::uint32_t next_id_ = 1;
  std::int64_t retry_at_us_ = 0;
  std::int64_t backoff_us_ = 0;
  std::uint64_t memory_limit_ = 0;
  bool warned_ = false;
};

std::int64_t monotonic_us();

}  // namespace eacgm::govern::hook
