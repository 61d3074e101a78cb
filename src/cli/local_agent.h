// LocalAgent: the agent `eacgm top` starts in its own process when no agent answers at
// the default address: the same trace, analysis and HTTP routes as `eacgm serve` (no
// history store, no kubelet), on a loopback port the system picks, so the view reads it
// as it reads any agent. Its last notice is kept, not printed (the screen is the view's).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/result.h"

namespace eacgm::server {
class Daemon;
}

namespace eacgm::cli {

class LocalAgent {
 public:
  // Starts tracing with the configuration at `config_path` ("" the embedded defaults) and
  // waits until the agent is ready (its probes attached). Fails with one line for the
  // user: a bad configuration, no privileges for eBPF, a probe that cannot attach.
  static Result<std::unique_ptr<LocalAgent>> start(const std::string& config_path);
  ~LocalAgent();  // stop()
  LocalAgent(const LocalAgent&) = delete;
  LocalAgent& operator=(const LocalAgent&) = delete;

  std::string url() const;
  // The trace's last notice; "" before the first.
  std::string last_notice() const;
  // Detaches the probes and stops serving; idempotent.
  void stop();

 private:
  LocalAgent() = default;
  void notice(const std::string& line);

  std::unique_ptr<server::Daemon> daemon_;
  std::thread trace_thread_;
  std::atomic<int> stop_{0};
  std::atomic<bool> reload_{false};
  std::atomic<bool> trace_ended_{false};
  mutable std::mutex mu_;
  std::string last_notice_;
};

}  // namespace eacgm::cli
