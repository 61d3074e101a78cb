// The log-normal model per (domain, function, size class), the per-call and interval
// tests, and the context of flagged calls.
#include "analysis/anomaly_detector.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>

namespace eacgm::analysis {
namespace {

constexpr double kWinsorSd = 4;
constexpr double kMaxCallZ = 10;  // one call's share of an interval's z-sum
constexpr double kPriorIntervals = 8;
constexpr std::size_t kMaxPending = 256;
constexpr std::uint64_t kPendingNs = 60'000'000'000;  // an op lasting longer is not waited for

std::size_t size_class(std::uint64_t bytes) {
  if (bytes == 0) return 0;
  return 1 + static_cast<std::size_t>(std::bit_width(bytes) - 1) / 2;
}

constexpr double kTailMass = 0.001;  // the percentile `tail_ratio` multiplies: 99.9th
constexpr double kTailCalls = 2;     // ... above at least this many calls: a mode seen thrice

std::size_t bucket_of(double log_ns) {
  const double b = std::floor(2 * log_ns / std::numbers::ln2);
  return b <= 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(b), 63);
}

std::uint64_t class_floor(std::size_t size_class) {
  return size_class == 0 ? 0 : std::uint64_t{1} << (2 * (size_class - 1));
}

}  // namespace

AnomalyDetector::ProbeEntry* AnomalyDetector::entry_for(const std::shared_ptr<const ProbeInfo>& probe) {
  if (auto it = by_probe_.find(probe.get()); it != by_probe_.end()) return &it->second;
  // Probes are few (one per attached symbol); their map is bounded like the keys.
  if (by_probe_.size() >= options_.max_functions * 4) return nullptr;
  ProbeEntry entry;
  // The runtime's registrations (__cudaRegisterFunction, ...) run at load time, their
  // cost set by the size of what they register: not the workload's calls.
  entry.ignored = probe->function.starts_with("__cuda");
  entry.bytes = BytesRule::of(probe->spec);
  entry.context = probe->spec.domain == "torch" || probe->spec.domain == "python";
  pinned_.push_back(probe);
  return &by_probe_.emplace(probe.get(), entry).first->second;
}

AnomalyDetector::Stats* AnomalyDetector::stats_for(const std::shared_ptr<const ProbeInfo>& probe,
                                                   ProbeEntry& entry, std::size_t cls) {
  if (Stats* s = entry.by_class[cls]) return s;
  Key key{probe->spec.domain, probe->function, cls};
  auto it = stats_.find(key);
  if (it == stats_.end()) {
    if (stats_.size() >= options_.max_functions) return nullptr;
    it = stats_.emplace(std::move(key), Stats{}).first;
    it->second.domain = std::get<0>(it->first);  // std::map nodes do not move
    it->second.name = std::get<1>(it->first);
    it->second.size_class = cls;
  }
  entry.by_class[cls] = &it->second;
  summary_.functions = stats_.size();
  return &it->second;
}

double AnomalyDetector::tail_ns(const Stats& s) {
  double above = 0;
  for (std::size_t b = kBuckets; b-- > 0;) {
    above += s.hist[b];
    if (above > std::max(kTailMass * s.hist_total, kTailCalls))
      return std::exp2(static_cast<double>(b + 1) / 2);
  }
  return 0;
}

void AnomalyDetector::learn(Stats& s, double x, std::uint64_t weight) const {
  s.hist[bucket_of(x)] += static_cast<float>(weight);
  s.hist_total += static_cast<double>(weight);
  if (s.hist_total >= 2.0 * static_cast<double>(options_.horizon)) {
    for (float& c : s.hist) c /= 2;
    s.hist_total /= 2;
  }
  if (s.n < options_.warmup) {
    // Welford's update, weighted (West): exact mean and variance of what came so far.
    const double w = static_cast<double>(weight);
    const double total = static_cast<double>(s.n) + w;
    const double delta = x - s.mean;
    s.mean += delta * w / total;
    s.m2 += w * delta * (x - s.mean);
    s.n += weight;
    if (s.n > 1) s.var = s.m2 / static_cast<double>(s.n - 1);
    return;
  }
  // An exponentially weighted update over `horizon` calls, winsorized.
  const double sd = std::max(std::sqrt(s.var), options_.min_log_sd);
  const double xc = std::clamp(x, s.mean - kWinsorSd * sd, s.mean + kWinsorSd * sd);
  const double alpha1 = 1.0 / static_cast<double>(std::min(s.n + 1, options_.horizon));
  const double alpha = 1.0 - std::pow(1.0 - alpha1, static_cast<double>(weight));
  const double delta = xc - s.mean;
  s.mean += alpha * delta;
  s.var = (1 - alpha) * (s.var + alpha * delta * delta);
  s.n += weight;
}

double AnomalyDetector::judge(Stats& s, double x, std::uint64_t weight) {
  double flagged_z = -1;
  if (s.n >= options_.warmup && s.n > 1) {
    const double sd = std::max(std::sqrt(s.var), options_.min_log_sd);
    const double z = (x - s.mean) / sd;
    // `ratio` times the median, in log space: only such a call needs the percentile.
    if (x - s.mean >= log_ratio_) {
      const double dur = std::exp(x);
      const double tail = tail_ns(s);
      if (dur - std::exp(s.mean) >= static_cast<double>(options_.min_excess_ns) &&
          dur >= options_.tail_ratio * tail &&
          (z > options_.z_threshold || dur >= options_.extreme_ratio * tail)) {
        flagged_z = z;
        s.median_ns = std::exp(s.mean);
      }
    }
    // The open interval's sums, each call's share capped so that one outlier alone does
    // not make a slow interval, against the model as it was at the interval's first
    // call (the model learns a slowdown while it lasts).
    if (!s.touched) {
      s.touched = true;
      s.interval_mean = s.mean;
      s.interval_sd = sd;
      s.interval_fresh = s.n == options_.warmup;
      touched_.push_back(&s);
    }
    const double w = static_cast<double>(weight);
    s.k += weight;
    s.z_sum += w * std::clamp((x - s.interval_mean) / s.interval_sd, -kMaxCallZ, kMaxCallZ);
    s.dx_sum += w * (x - s.interval_mean);
  }
  if (flagged_z < 0) {
    s.run = 0;
    learn(s, x, weight);
  } else if (++s.run >= options_.shift_run) {
    // A new level: learn it again rather than flag each of its calls.
    s.n = 0;
    s.mean = s.m2 = s.var = 0;
    s.run = 0;
    s.hist.fill(0);
    s.hist_total = 0;
    ++summary_.level_shifts;
  }
  return flagged_z;
}

std::uint64_t AnomalyDetector::group_size(const Stats& s, std::uint64_t ts_ns) const {
  // The key's own rate of slow calls before the window (a prior of one a minute, worth a
  // minute) gives the calls expected within it; a group is as many as that rate leaves less
  // likely than `cluster_alpha`.
  constexpr double kPriorLone = 6;
  constexpr double kPriorNs = 60e9;
  const double elapsed = static_cast<double>(ts_ns - std::min(s.first_ns, ts_ns));
  const double mu = (s.lone + kPriorLone) * static_cast<double>(options_.cluster_ns) / (elapsed + kPriorNs);
  double term = std::exp(-mu);  // P(X = k)
  double below = 0;             // P(X < k)
  std::uint64_t k = 0;
  for (; k < 64; ++k) {
    if (1 - below < options_.cluster_alpha) break;
    below += term;
    term *= mu / static_cast<double>(k + 1);
  }
  return std::max(k, options_.cluster_min);
}

void AnomalyDetector::release(std::uint64_t now_ns) {
  while (!slow_.empty() &&
         (slow_.front().ts_ns + options_.cluster_ns < now_ns || slow_.size() > kMaxPending)) {
    Slow& h = slow_.front();
    h.key->recent -= std::min(h.key->recent, h.weight);
    h.key->lone += static_cast<double>(h.weight);
    slow_.pop_front();
  }
}

bool AnomalyDetector::report(Stats& s, Anomaly a, std::uint64_t weight, std::uint64_t excess_ns) {
  const std::uint64_t ts = a.ts_ns;
  release(ts);
  const auto keep_one = [&](Anomaly one) {
    const std::uint32_t pid = one.pid, tid = one.tid;
    const std::uint64_t start = one.ts_ns, end = one.ts_ns + one.dur_ns;
    const bool wants_op = !one.sampled && one.op.empty();
    // A repeat's context is its entry's first call's.
    if (!keep(std::move(one)) && wants_op && options_.keep > 0) {
      if (pending_.size() >= kMaxPending) pending_.pop_front();
      pending_.push_back({next_seq_ - 1, pid, tid, start, end});
    }
  };
  s.recent += weight;
  const bool alone = excess_ns >= options_.alone_excess_ns;
  if (!alone && s.recent < group_size(s, ts)) {
    slow_.push_back({&s, ts, weight, true, std::move(a)});
    return false;
  }
  // Reported, with the held slow calls of its key when they make a group, oldest first.
  if (!alone) {
    for (Slow& h : slow_) {
      if (h.key != &s || !h.held) continue;
      h.held = false;
      keep_one(std::move(h.anomaly));
    }
  }
  slow_.push_back({&s, ts, weight, false, {}});
  keep_one(std::move(a));
  return true;
}

bool AnomalyDetector::keep(Anomaly a) {
  ++summary_.total;
  if (options_.keep == 0) return false;
  a.last_ts_ns = a.ts_ns;
  a.max_dur_ns = a.dur_ns;
  RepeatKey key{a.pid, a.domain, a.name, a.sampled};
  if (auto it = newest_.find(key); it != newest_.end() && options_.coalesce_ns > 0) {
    const std::uint64_t first_seq = next_seq_ - summary_.recent.size();
    if (it->second >= first_seq) {
      Anomaly& kept = summary_.recent[it->second - first_seq];
      if (a.ts_ns <= kept.last_ts_ns + options_.coalesce_ns) {
        ++kept.repeats;
        kept.calls += a.calls;
        kept.last_ts_ns = std::max(kept.last_ts_ns, a.ts_ns);
        kept.max_dur_ns = std::max(kept.max_dur_ns, a.dur_ns);
        ++summary_.coalesced;
        return true;
      }
    }
  }
  if (summary_.recent.size() >= options_.keep) summary_.recent.pop_front();
  summary_.recent.push_back(std::move(a));
  newest_[std::move(key)] = next_seq_++;
  summary_.kept = next_seq_;
  if (newest_.size() > 2 * options_.keep) {
    // Keys whose newest anomaly has left the kept ones: nothing to merge into.
    const std::uint64_t first_seq = next_seq_ - summary_.recent.size();
    std::erase_if(newest_, [&](const auto& entry) { return entry.second < first_seq; });
  }
  return false;
}

bool AnomalyDetector::add(const CallEvent& event) {
  if (!event.probe || !event.has_exit) return false;
  ProbeEntry* entry = entry_for(event.probe);
  if (entry == nullptr) {
    if (event.dur_ns != 0) ++summary_.untracked_calls;
    return false;
  }
  if (entry->context && (!pending_.empty() || !slow_.empty())) complete_context(event);
  if (event.dur_ns == 0 || entry->ignored) return false;
  if (interval_start_ns_ == 0) interval_start_ns_ = event.ts_ns;
  const std::uint64_t bytes = entry->bytes.has_bytes() ? entry->bytes.bytes(event).value_or(0) : 0;
  const bool held_off = event.run_delay_ns > 0 && 2 * event.run_delay_ns >= event.dur_ns;
  Stats* s = stats_for(event.probe, *entry, size_class(bytes) + (held_off ? kClasses : 0));
  if (s == nullptr) {
    ++summary_.untracked_calls;
    return false;
  }
  // At least 1 ns of the call's own, should the two clocks disagree by a tick.
  const std::uint64_t own_ns = event.dur_ns - std::min(event.run_delay_ns, event.dur_ns - 1);
  if (s->first_ns == 0) s->first_ns = event.ts_ns;
  const double z = judge(*s, std::log(static_cast<double>(own_ns)), 1);
  if (z < 0) return false;
  Anomaly a;
  a.ts_ns = event.ts_ns;
  a.pid = event.pid;
  a.tid = event.tid;
  a.domain = std::string(event.domain());
  a.name = std::string(event.function());
  a.dur_ns = event.dur_ns;
  a.run_delay_ns = event.dur_ns - own_ns;
  a.bytes = bytes;
  a.score = z;
  a.median_ns = s->median_ns;
  a.comm = std::string(event.comm_view());
  a.args.assign(event.args.begin(), event.args.begin() + std::min<std::size_t>(event.nargs, kMaxArgs));
  a.call = std::make_shared<const CallEvent>(event);
  const double excess = static_cast<double>(own_ns) - s->median_ns;
  return report(*s, std::move(a), 1, static_cast<std::uint64_t>(std::max(excess, 0.0)));
}

bool AnomalyDetector::add(const CallTimings& t, std::uint64_t now_ns) {
  if (!t.probe || t.count == 0 || t.sum_ns == 0) return false;
  ProbeEntry* entry = entry_for(t.probe);
  if (entry != nullptr && entry->ignored) return false;
  // The calls held off the CPU for half their time or more apart, as per-call records are,
  // at their own time (less the waits for a CPU); the others at their whole duration.
  const std::uint64_t held = std::min(t.held, t.count);
  const std::uint64_t held_sum = std::min(t.held_sum_ns, t.sum_ns);
  bool flagged = false;
  if (t.count > held) flagged |= add_bucket(t, entry, 0, t.count - held, t.sum_ns - held_sum, 0, now_ns);
  if (held > 0)
    flagged |= add_bucket(t, entry, kClasses, held, held_sum, std::min(t.held_delay_ns, held_sum), now_ns);
  return flagged;
}

bool AnomalyDetector::add_bucket(const CallTimings& t, ProbeEntry* entry, std::size_t cls,
                                 std::uint64_t count, std::uint64_t sum_ns, std::uint64_t delay_ns,
                                 std::uint64_t now_ns) {
  Stats* s = entry ? stats_for(t.probe, *entry, cls) : nullptr;
  if (s == nullptr) {
    summary_.untracked_calls += count;
    return false;
  }
  if (interval_start_ns_ == 0) interval_start_ns_ = now_ns;
  if (s->first_ns == 0) s->first_ns = now_ns;
  const double n = static_cast<double>(count);
  const double mean_ns = static_cast<double>(sum_ns) / n;
  const double own_ns = std::max(1.0, static_cast<double>(sum_ns - delay_ns) / n);
  const double z = judge(*s, std::log(own_ns), count);
  if (z < 0) return false;
  Anomaly a;
  a.ts_ns = now_ns;
  a.pid = t.pid;
  a.domain = t.probe->spec.domain;
  a.name = t.probe->function;
  a.dur_ns = static_cast<std::uint64_t>(mean_ns);
  a.run_delay_ns = static_cast<std::uint64_t>(mean_ns - own_ns);
  a.score = z;
  a.median_ns = s->median_ns;
  a.sampled = true;
  a.calls = count;
  const double excess = own_ns - s->median_ns;
  return report(*s, std::move(a), count, static_cast<std::uint64_t>(std::max(excess, 0.0)));
}

void AnomalyDetector::complete_context(const CallEvent& op) {
  const std::uint64_t op_end = op.ts_ns + op.dur_ns;
  const std::uint64_t first_seq = next_seq_ - summary_.recent.size();
  for (auto it = pending_.begin(); it != pending_.end();) {
    const bool expired = it->seq < first_seq || op.ts_ns > it->end + kPendingNs;
    const bool encloses =
        it->pid == op.pid && it->tid == op.tid && op.ts_ns <= it->start && it->end <= op_end;
    if (encloses && !expired) {
      summary_.recent[it->seq - first_seq].op = std::string(op.function());
      ++summary_.context_updates;
    }
    it = (encloses || expired) ? pending_.erase(it) : std::next(it);
  }
  // Held slow calls get their context too, so that it is there when they are reported.
  for (Slow& h : slow_) {
    Anomaly& a = h.anomaly;
    if (!h.held || a.sampled || !a.op.empty() || a.pid != op.pid || a.tid != op.tid) continue;
    if (op.ts_ns <= a.ts_ns && a.ts_ns + a.dur_ns <= op_end) a.op = std::string(op.function());
  }
}

void AnomalyDetector::learn_interval(Stats& s, double dx, double within) const {
  const double floor = options_.min_interval_sd * options_.min_interval_sd;
  const double limit = kWinsorSd * std::sqrt(within + std::max(s.between_var, floor));
  const double dc = std::clamp(dx, -limit, limit);
  // Squares below the calls' own variance are counted as none: the spread errs wide.
  const double excess = std::max(dc * dc - within, 0.0);
  // The floor is the prior, worth kPriorIntervals intervals: one odd first interval (a
  // slowdown that began in it) does not set the spread that judges the next.
  if (s.intervals == 0) s.between_var = floor;
  s.intervals = std::min(s.intervals + 1, options_.interval_horizon);
  s.between_var += (excess - s.between_var) / static_cast<double>(s.intervals + kPriorIntervals);
}

void AnomalyDetector::close_interval(std::uint64_t now_ns) {
  const double floor = options_.min_interval_sd * options_.min_interval_sd;
  release(now_ns);
  const auto record = [&](const IntervalAnomaly& v) {
    ++summary_.interval_total;
    if (options_.keep == 0) return;
    if (summary_.intervals.size() >= options_.keep) summary_.intervals.pop_front();
    summary_.intervals.push_back(v);
  };
  // The slow intervals of the last round: confirmed by a slow one of their key in this
  // round, else let go (not learnt, like any slow interval).
  std::vector<SlowInterval> waiting;
  waiting.swap(slow_intervals_);
  const auto take_waiting = [&](const Stats* s) -> SlowInterval* {
    for (SlowInterval& w : waiting) {
      if (w.key == s) return &w;
    }
    return nullptr;
  };
  const auto slow_interval = [&](const Stats& s, double mean_ns, double median_ns, double score) {
    return IntervalAnomaly{interval_start_ns_,
                           now_ns,
                           std::string(s.domain),
                           std::string(s.name),
                           class_floor(s.size_class % kClasses),
                           s.k,
                           mean_ns,
                           median_ns,
                           mean_ns / median_ns,
                           score};
  };
  for (Stats* s : touched_) {
    if (s->k >= options_.interval_calls) {
      const double k = static_cast<double>(s->k);
      // The calls' mean excess with each call's share capped (z_sum), in log units, and
      // its standard error: the calls' own spread and that of interval means (header).
      const double dx = s->interval_sd * s->z_sum / k;
      const double within = s->interval_sd * s->interval_sd / k;
      const double se = std::sqrt(within + std::max(s->between_var, floor));
      const double score = dx / se;
      const double median_ns = std::exp(s->interval_mean);
      const double mean_ns = std::exp(s->interval_mean + s->dx_sum / k);
      const double ratio = mean_ns / median_ns;
      bool goes_on = false;
      if (SlowInterval* before = take_waiting(s)) {
        // The slowdown goes on: judged against the model as it was at its first interval
        // (the model has learnt part of it since).
        const double dx0 = std::log(mean_ns) - before->base;
        const double score0 = dx0 / before->se;
        if (score0 > options_.interval_z && std::exp(dx0) >= options_.interval_ratio) {
          if (!before->recorded) record(before->interval);
          IntervalAnomaly v = slow_interval(*s, mean_ns, std::exp(before->base), score0);
          record(v);
          slow_intervals_.push_back({s, std::move(v), before->base, before->se, true});
          goes_on = true;
        }
      }
      if (!goes_on && score > options_.interval_z && ratio >= options_.interval_ratio) {
        IntervalAnomaly v = slow_interval(*s, mean_ns, median_ns, score);
        const bool alone = ratio >= options_.interval_alone_ratio;
        if (alone) record(v);
        slow_intervals_.push_back({s, std::move(v), s->interval_mean, se, alone});
      } else if (!goes_on && !s->interval_fresh) {
        learn_interval(*s, dx, within);  // a slow interval, like a slow call, is not learnt
      }
    }
    s->k = 0;
    s->z_sum = s->dx_sum = 0;
    s->touched = false;
  }
  touched_.clear();
  interval_start_ns_ = now_ns;
}

}  // namespace eacgm::analysis
