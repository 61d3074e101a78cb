// Welford statistics over log durations and the bounded list of flagged calls.
#include "analysis/anomaly_detector.h"

#include <algorithm>
#include <cmath>

namespace eacgm::analysis {

AnomalyDetector::Stats* AnomalyDetector::stats_for(const CallEvent& event) {
  if (auto it = by_probe_.find(event.probe.get()); it != by_probe_.end()) return it->second;
  // Probes are few (one per attached symbol); their map is bounded like the functions'.
  if (by_probe_.size() >= options_.max_functions * 4) return nullptr;
  auto key = std::make_pair(std::string(event.domain()), std::string(event.function()));
  auto it = stats_.find(key);
  if (it == stats_.end()) {
    if (stats_.size() >= options_.max_functions) return nullptr;
    it = stats_.emplace(std::move(key), Stats{}).first;
  }
  pinned_.push_back(event.probe);
  by_probe_.emplace(event.probe.get(), &it->second);  // std::map nodes do not move
  summary_.functions = stats_.size();
  return &it->second;
}

bool AnomalyDetector::add(const CallEvent& event) {
  if (!event.probe || !event.has_exit || event.dur_ns == 0) return false;
  Stats* s = stats_for(event);
  if (s == nullptr) {
    ++summary_.untracked_calls;
    return false;
  }
  const double x = std::log(static_cast<double>(event.dur_ns));
  bool flagged = false;
  if (s->n >= options_.warmup && s->n > 1) {
    const double sd = std::sqrt(s->m2 / static_cast<double>(s->n - 1));
    const double median = std::exp(s->mean);
    const double z = sd > 0 ? (x - s->mean) / sd : 0;
    if (sd > 0 && z > options_.z_threshold && static_cast<double>(event.dur_ns) >= options_.ratio * median) {
      flagged = true;
      Anomaly a;
      a.ts_ns = event.ts_ns;
      a.pid = event.pid;
      a.tid = event.tid;
      a.domain = std::string(event.domain());
      a.name = std::string(event.function());
      a.dur_ns = event.dur_ns;
      a.score = z;
      a.median_ns = median;
      a.args.assign(event.args.begin(), event.args.begin() + std::min<std::size_t>(event.nargs, kMaxArgs));
      if (options_.keep > 0) {
        if (summary_.recent.size() >= options_.keep) summary_.recent.pop_front();
        summary_.recent.push_back(std::move(a));
      }
      ++summary_.total;
    }
  }
  // Welford's update (flagged calls included, so that a lasting shift is learned).
  ++s->n;
  const double delta = x - s->mean;
  s->mean += delta / static_cast<double>(s->n);
  s->m2 += delta * (x - s->mean);
  return flagged;
}

}  // namespace eacgm::analysis
