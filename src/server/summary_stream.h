// SummaryStream: the live stream's producer. A Consumer on the output thread that counts
// calls per function and, each tick, publishes to an SseChannel one `summary` event: the
// calls and errors of the last tick per function, and the agent's counters that moved.
// For clients that asked for calls (SseChannel::Filter::tagged), it also publishes `call`
// events tagged with the pid: a sample of at most kCallsPerSecond calls a second for the
// clients that take every pid and as many for each pid asked for.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/consumer.h"
#include "server/sse_channel.h"

namespace eacgm::server {

class SummaryStream final : public Consumer {
 public:
  // `max_functions`: distinct functions counted; calls of further ones go to "other".
  explicit SummaryStream(std::shared_ptr<SseChannel> channel, std::size_t max_functions = 4096)
      : channel_(std::move(channel)), max_functions_(max_functions) {}

  static constexpr std::size_t kCallsPerSecond = 100;

  void on_calls(std::span<const CallEvent> calls) override;
  void on_tick(std::chrono::steady_clock::time_point now, const CounterValues& counters) override;

  // The event a tick would publish now (also for tests); resets the per-tick counts.
  std::string take_event(const CounterValues& counters);
  // The `call` event of one call.
  static std::string call_event(const CallEvent& e);

 private:
  struct Count {
    std::string domain, function;
    std::uint64_t calls = 0, errors = 0;
  };
  std::shared_ptr<SseChannel> channel_;
  std::size_t max_functions_;
  std::unordered_map<const ProbeInfo*, Count> counts_;
  std::vector<std::shared_ptr<const ProbeInfo>> pinned_;  // keeps the keys' addresses unique
  Count other_{"other", "other", 0, 0};
  std::unordered_map<std::string, std::uint64_t> last_counters_;
  std::uint64_t sequence_ = 0;
  // Calls sampled for the stream: who wants them (refreshed when clients change) and
  // this second's counts (any pid, and per pid asked for).
  void sample_calls(std::span<const CallEvent> calls);
  std::uint64_t interest_generation_ = ~std::uint64_t{0};
  SseChannel::Interest interest_;
  std::uint64_t sample_second_ = 0;
  std::size_t sampled_any_ = 0;
  std::vector<std::size_t> sampled_by_tag_;  // parallel to interest_.tags
};

}  // namespace eacgm::server
