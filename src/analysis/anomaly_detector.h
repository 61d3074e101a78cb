// AnomalyDetector: an online detector of unusually slow calls per (domain, function).
// For each function it keeps Welford's running mean and variance of log(duration); once a
// function has `warmup` timed calls, a call is anomalous when its log-duration z-score
// exceeds `z_threshold` and its duration is at least `ratio` times the running median
// estimate, exp(mean of the log durations). It keeps the last `keep` anomalies and a
// count of all of them; at most `max_functions` functions are tracked (calls of further
// ones are counted as untracked).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/call_event.h"

namespace eacgm::analysis {

struct Anomaly {
  std::uint64_t ts_ns = 0;
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string domain;
  std::string name;
  std::uint64_t dur_ns = 0;
  double score = 0;                 // the log-duration z-score
  double median_ns = 0;             // the running median estimate when it was flagged
  std::vector<std::uint64_t> args;  // the call's raw argument values
};

struct AnomalySummary {
  std::deque<Anomaly> recent;  // oldest first
  std::uint64_t total = 0;
  std::size_t functions = 0;          // functions tracked
  std::uint64_t untracked_calls = 0;  // timed calls past max_functions
};

class AnomalyDetector {
 public:
  struct Options {
    std::uint64_t warmup = 200;
    double z_threshold = 6;
    double ratio = 10;
    std::size_t keep = 256;
    std::size_t max_functions = 4096;
  };
  AnomalyDetector() : AnomalyDetector(Options{}) {}
  explicit AnomalyDetector(Options options) : options_(options) {}

  // True when the call was flagged. Calls without a duration are ignored.
  bool add(const CallEvent& event);
  const AnomalySummary& summary() const { return summary_; }
  std::size_t functions() const { return stats_.size(); }

 private:
  struct Stats {
    std::uint64_t n = 0;
    double mean = 0;
    double m2 = 0;
  };
  Stats* stats_for(const CallEvent& event);

  Options options_;
  std::map<std::pair<std::string, std::string>, Stats> stats_;
  std::unordered_map<const ProbeInfo*, Stats*> by_probe_;
  std::vector<std::shared_ptr<const ProbeInfo>> pinned_;  // keeps by_probe_'s keys unique
  AnomalySummary summary_;
};

}  // namespace eacgm::analysis
