// eacgm-sched's event loop: one thread, poll() over the Unix socket (peer credentials
// name the tenant), the optional TCP socket (tenant + secret), the metrics endpoint and
// every client; one GpuScheduler per GPU; the config file re-read when it changes.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/result.h"
#include "govern/sched/tenant_config.h"

namespace eacgm::govern::sched {

class SchedServer {
 public:
  // Binds every socket the config names; an error says which and why.
  static Result<std::unique_ptr<SchedServer>> start(SchedulerConfig cfg, std::string config_path);
  ~SchedServer();
  SchedServer(const SchedServer&) = delete;
  SchedServer& operator=(const SchedServer&) = delete;

  // Serves until `stop` is set (checked at least every 200 ms).
  void run(const std::atomic<bool>& stop);

  struct Impl;

 private:
  explicit SchedServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace eacgm::govern::sched
