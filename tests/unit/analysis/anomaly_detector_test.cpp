// AnomalyDetector: planted outliers in a log-normal stream are found (with their args);
// 100k clean log-normal calls flag no call and no interval; nothing is flagged during the
// warm-up; a sustained slowdown below the per-call ratio is a slow interval, also on a
// loaded machine whose intervals swing together, which alone raises none; a lasting
// shift is learnt again; an outlier does not hide the next; sizes are judged apart;
// sampled buckets are judged, their calls held off the CPU apart; the enclosing op completes an anomaly;
// repeats of a process's function are coalesced into one entry per window; a call is judged without the time
// it waited for a CPU; memory is capped.
#include "analysis/anomaly_detector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <random>

namespace eacgm::analysis {
namespace {

std::shared_ptr<ProbeInfo> probe(const std::string& function) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->spec.domain = "cuda";
  return p;
}

CallEvent call(const std::shared_ptr<ProbeInfo>& p, std::uint64_t dur_ns, std::uint64_t ts = 1) {
  CallEvent e;
  e.probe = p;
  e.ts_ns = ts;
  e.pid = 42;
  e.has_exit = true;
  e.dur_ns = dur_ns;
  e.nargs = 2;
  e.args[0] = 7;
  e.args[1] = 9;
  return e;
}

std::uint64_t lognormal(std::mt19937_64& rng) {
  std::lognormal_distribution<double> d(std::log(20'000.0), 0.5);
  return static_cast<std::uint64_t>(d(rng)) + 1;
}

// Each flagged call kept apart (no coalescing of repeats).
AnomalyDetector::Options apart() {
  AnomalyDetector::Options o;
  o.coalesce_ns = 0;
  return o;
}

TEST(AnomalyDetector, FindsPlantedOutliers) {
  AnomalyDetector detector(apart());
  auto p = probe("cudaMemcpy");
  std::mt19937_64 rng(1);
  std::vector<std::uint64_t> planted_at;
  for (std::uint64_t i = 0; i < 20'000; ++i) {
    if (i > 1000 && i % 2000 == 0) {
      // 2500x the median, each 50 ms more: a group from the seventh on, the first six with
      // it (a key's first minute assumes a busy machine's six slow calls a minute).
      planted_at.push_back(i);
      EXPECT_EQ(detector.add(call(p, 50'000'000, i)), planted_at.size() >= 7) << i;
    } else {
      detector.add(call(p, lognormal(rng), i));
    }
  }
  const auto& s = detector.summary();
  EXPECT_EQ(s.total, planted_at.size());
  ASSERT_EQ(s.recent.size(), planted_at.size());
  EXPECT_EQ(s.recent[0].ts_ns, planted_at[0]);
  EXPECT_EQ(s.recent[0].name, "cudaMemcpy");
  EXPECT_EQ(s.recent[0].domain, "cuda");
  EXPECT_EQ(s.recent[0].pid, 42u);
  EXPECT_EQ(s.recent[0].dur_ns, 50'000'000u);
  EXPECT_GT(s.recent[0].score, 6);
  EXPECT_NEAR(s.recent[0].median_ns, 20'000, 2'000);
  EXPECT_EQ(s.recent[0].args, (std::vector<std::uint64_t>{7, 9}));
}

TEST(AnomalyDetector, CleanLogNormalStreamFlagsNone) {
  AnomalyDetector detector;
  auto p = probe("cudaLaunchKernel");
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100'000; ++i) {
    detector.add(call(p, lognormal(rng)));
    if (i % 1000 == 999) detector.close_interval(static_cast<std::uint64_t>(i));
  }
  EXPECT_EQ(detector.summary().total, 0u);
  EXPECT_TRUE(detector.summary().recent.empty());
  EXPECT_EQ(detector.summary().interval_total, 0u);
  EXPECT_EQ(detector.summary().level_shifts, 0u);
}

TEST(AnomalyDetector, SustainedSlowdownIsASlowInterval) {
  AnomalyDetector detector;
  auto p = probe("cudaStreamSynchronize");
  std::mt19937_64 rng(3);
  for (int i = 0; i < 5000; ++i) detector.add(call(p, lognormal(rng)));
  detector.close_interval(100);
  EXPECT_EQ(detector.summary().interval_total, 0u);
  // Three times slower for 200 calls: no single call reaches 10x the median.
  for (int i = 0; i < 200; ++i) detector.add(call(p, 3 * lognormal(rng)));
  detector.close_interval(200);
  const auto& s = detector.summary();
  ASSERT_EQ(s.interval_total, 1u);
  ASSERT_EQ(s.intervals.size(), 1u);
  EXPECT_EQ(s.intervals[0].name, "cudaStreamSynchronize");
  EXPECT_EQ(s.intervals[0].calls, 200u);
  EXPECT_EQ(s.intervals[0].start_ns, 100u);
  EXPECT_EQ(s.intervals[0].end_ns, 200u);
  EXPECT_NEAR(s.intervals[0].ratio, 3.0, 0.4);
  EXPECT_NEAR(s.intervals[0].median_ns, 20'000, 2'000);
  // The value the median is compared with is the calls' duration, in ns like the median
  // (not the interval's length), and the ratio is their quotient.
  EXPECT_NEAR(s.intervals[0].mean_ns, 60'000, 8'000);
  EXPECT_DOUBLE_EQ(s.intervals[0].ratio, s.intervals[0].mean_ns / s.intervals[0].median_ns);
  // Back to normal: the next interval is not slow.
  for (int i = 0; i < 200; ++i) detector.add(call(p, lognormal(rng)));
  detector.close_interval(300);
  EXPECT_EQ(detector.summary().interval_total, 1u);
}

// A uniform loop on a loaded machine: 500 calls a second, and each second all of them
// slowed together by a log-normal load factor (sigma 0.13: swings of 1.2-1.5x). Calls of
// one interval are not independent, so their plain z-sum, z_sum / sqrt(calls), would
// flag many intervals; judged against the learnt spread of interval means, none is.
constexpr std::uint64_t kSecond = 1'000'000'000;
constexpr std::uint64_t kMs = 1'000'000;
constexpr int kCallsPerSecond = 500;

struct LoadedLoop {
  AnomalyDetector detector;
  std::shared_ptr<ProbeInfo> p = probe("cudaStreamSynchronize");
  std::mt19937_64 rng{23};
  std::lognormal_distribution<double> load{0, 0.13};
  std::uint64_t second = 0;
  std::uint64_t flagged = 0;

  // One second of calls, `slowdown` times slower than the load makes them.
  void run_second(double slowdown = 1) {
    const double factor = load(rng) * slowdown;
    for (int i = 0; i < kCallsPerSecond; ++i) {
      const std::uint64_t ts = second * kSecond + static_cast<std::uint64_t>(i) * (kSecond / kCallsPerSecond);
      const auto dur = static_cast<std::uint64_t>(factor * static_cast<double>(lognormal(rng)));
      flagged += detector.add(call(p, dur, ts)) ? 1 : 0;
    }
    detector.close_interval(++second * kSecond);
  }
};

TEST(AnomalyDetector, ALoadedMachineRaisesNoneInTenMinutes) {
  LoadedLoop loop;
  for (int i = 0; i < 600; ++i) loop.run_second();
  const auto& s = loop.detector.summary();
  EXPECT_EQ(loop.flagged, 0u);
  EXPECT_EQ(s.total, 0u);
  EXPECT_EQ(s.interval_total, 0u) << "first: " << (s.intervals.empty() ? 0 : s.intervals[0].ratio) << "x";
  EXPECT_EQ(s.level_shifts, 0u);
}

// The same loaded loop, three times slower for five seconds: the slowdown is a slow
// interval from its first second, and nothing outside it is flagged.
TEST(AnomalyDetector, ASustainedSlowdownOnALoadedMachineIsStillFound) {
  LoadedLoop loop;
  for (int i = 0; i < 120; ++i) loop.run_second();
  ASSERT_EQ(loop.detector.summary().interval_total, 0u);
  for (int i = 0; i < 5; ++i) loop.run_second(3);
  for (int i = 0; i < 120; ++i) loop.run_second();
  const auto& s = loop.detector.summary();
  EXPECT_EQ(loop.flagged, 0u) << "no single call is 10x its median";
  ASSERT_GE(s.interval_total, 1u);
  EXPECT_EQ(s.intervals.front().start_ns, 120 * kSecond) << "found in its first second";
  for (const auto& v : s.intervals) {
    EXPECT_GE(v.start_ns, 120 * kSecond);
    EXPECT_LE(v.end_ns, 125 * kSecond) << "flagged after the slowdown: " << v.ratio << "x";
    EXPECT_GE(v.ratio, 1.5);
  }
}

// A tight loop of 2 us calls on a loaded, virtualised machine, 1,000 a second, each second
// slowed together by the load (sigma 0.13), with what the scheduler's run delay does not
// cover: interrupts (one call in 3,000 takes 20-40 us more, one in 300,000 300 us more)
// and the hypervisor's steal (three times a minute, 1-20 ms added to the call then
// running); and one call in 2,000 held off the CPU for up to 30 ms, which the run delay
// does cover. `plant` adds 10 ms to calls of its choice.
struct StolenLoop {
  AnomalyDetector detector;
  std::shared_ptr<ProbeInfo> p = probe("cudaMalloc");
  std::mt19937_64 rng{29};
  std::lognormal_distribution<double> load{0, 0.13};
  std::lognormal_distribution<double> own{std::log(2'000.0), 0.3};
  std::uniform_real_distribution<double> u{0, 1};
  std::uint64_t second = 0;
  std::uint64_t flagged = 0;
  std::uint64_t planted = 0;

  void run_second(const std::function<bool(int)>& plant = nullptr) {
    const double factor = load(rng);
    constexpr int kCalls = 1000;
    const double steal_chance = 3.0 / 60;  // per second
    const int stolen = u(rng) < steal_chance ? static_cast<int>(u(rng) * kCalls) : -1;
    for (int i = 0; i < kCalls; ++i) {
      const std::uint64_t ts = second * kSecond + static_cast<std::uint64_t>(i) * (kSecond / kCalls);
      CallEvent e = call(p, static_cast<std::uint64_t>(factor * own(rng)) + 1, ts);
      const double r = u(rng);
      if (r < 1.0 / 300'000) {
        e.dur_ns += 300'000;
      } else if (r < 1.0 / 3'000) {
        e.dur_ns += static_cast<std::uint64_t>(20'000 + 20'000 * u(rng));
      } else if (r < 1.0 / 3'000 + 1.0 / 2'000) {
        e.run_delay_ns = static_cast<std::uint64_t>(30 * kMs * u(rng)) + 1;
        e.dur_ns = 20 * e.dur_ns + e.run_delay_ns;
      }
      if (i == stolen) e.dur_ns += static_cast<std::uint64_t>(kMs * std::pow(20.0, u(rng)));
      if (plant && plant(i)) {
        e.dur_ns += 10 * kMs;
        ++planted;
      }
      flagged += detector.add(e) ? 1 : 0;
    }
    detector.close_interval(++second * kSecond);
  }
};

TEST(AnomalyDetector, StolenTimeOnALoadedMachineRaisesNoneInTenMinutes) {
  StolenLoop loop;
  for (int i = 0; i < 600; ++i) loop.run_second();
  const auto& s = loop.detector.summary();
  EXPECT_EQ(s.total, 0u) << (s.recent.empty() ? 0 : s.recent[0].dur_ns) << " ns at "
                         << (s.recent.empty() ? 0 : s.recent[0].ts_ns / kSecond) << " s";
  EXPECT_EQ(s.interval_total, 0u);
  EXPECT_EQ(s.level_shifts, 0u);
}

// In that noise, every 50th call 10 ms slower for five seconds: each of them is found, one
// entry, with at most the stolen calls held in the 10 s before.
TEST(AnomalyDetector, PlantedSlowCallsAmongStolenTimeAreAllFound) {
  StolenLoop loop;
  for (int i = 0; i < 120; ++i) loop.run_second();
  ASSERT_EQ(loop.detector.summary().total, 0u);
  for (int i = 0; i < 5; ++i) loop.run_second([](int call) { return call % 50 == 0; });
  for (int i = 0; i < 60; ++i) loop.run_second();
  const auto& s = loop.detector.summary();
  EXPECT_EQ(loop.planted, 100u);
  EXPECT_GE(s.total, loop.planted);
  EXPECT_LE(s.total, loop.planted + 3);
  ASSERT_EQ(s.recent.size(), 1u);
  EXPECT_GE(s.recent[0].ts_ns, 110 * kSecond);
  EXPECT_LE(s.recent[0].ts_ns, 120 * kSecond);
  EXPECT_EQ(s.recent[0].repeats, s.total);
  EXPECT_EQ(s.interval_total, 0u);
}

// On a steady machine, a second at 1.93x its median is no slow interval alone (its score,
// about 5.4 against the spread's floor, is over the bar, its ratio under 2); three such
// seconds in a row are three, from the first; a second at 4x is one alone.
TEST(AnomalyDetector, ASlowIntervalLastsOrIsTwiceTheMedian) {
  AnomalyDetector detector;
  auto p = probe("cudaStreamSynchronize");
  std::mt19937_64 rng(31);
  std::uint64_t second = 0;
  const auto run_second = [&](double slowdown) {
    for (int i = 0; i < kCallsPerSecond; ++i) {
      const std::uint64_t ts = second * kSecond + static_cast<std::uint64_t>(i) * (kSecond / kCallsPerSecond);
      detector.add(call(p, static_cast<std::uint64_t>(slowdown * static_cast<double>(lognormal(rng))), ts));
    }
    detector.close_interval(++second * kSecond);
  };
  const auto& s = detector.summary();
  for (int i = 0; i < 120; ++i) run_second(1);
  run_second(1.93);
  for (int i = 0; i < 60; ++i) run_second(1);
  EXPECT_EQ(s.interval_total, 0u) << s.intervals.front().score;
  for (int i = 0; i < 3; ++i) run_second(1.93);
  run_second(1);
  ASSERT_EQ(s.interval_total, 3u);
  EXPECT_EQ(s.intervals[0].start_ns, 181 * kSecond);
  EXPECT_EQ(s.intervals[2].end_ns, 184 * kSecond);
  for (const auto& v : s.intervals) {
    EXPECT_GT(v.score, 5);
    EXPECT_LT(v.ratio, 2);
  }
  for (int i = 0; i < 60; ++i) run_second(1);
  run_second(4);
  ASSERT_EQ(s.interval_total, 4u);
  EXPECT_EQ(s.intervals.back().start_ns, 245 * kSecond);
  EXPECT_GT(s.intervals.back().ratio, 3);
}

TEST(AnomalyDetector, ALastingShiftIsLearntAgain) {
  AnomalyDetector detector;
  auto p = probe("ncclAllReduce");
  std::mt19937_64 rng(5);
  for (int i = 0; i < 1000; ++i) detector.add(call(p, lognormal(rng)));
  for (int i = 0; i < 2000; ++i) detector.add(call(p, 1000 * lognormal(rng)));
  const auto& s = detector.summary();
  EXPECT_EQ(s.level_shifts, 1u);
  EXPECT_GE(s.total, 14u) << "the new level's first calls are flagged";
  EXPECT_LE(s.total, 16u) << "then it is learnt, not flagged call after call";
}

TEST(AnomalyDetector, AnOutlierDoesNotHideTheNext) {
  AnomalyDetector detector;
  auto p = probe("cuMemcpyDtoH_v2");
  std::mt19937_64 rng(11);
  for (int i = 0; i < 1000; ++i) detector.add(call(p, lognormal(rng)));
  for (int k = 0; k < 50; ++k) {
    EXPECT_TRUE(detector.add(call(p, 20'000'000'000))) << k;  // 1e6x
    detector.add(call(p, lognormal(rng)));
  }
  EXPECT_TRUE(detector.add(call(p, 5'000'000))) << "250x the median is still flagged";
}

TEST(AnomalyDetector, ARareButRegularSlowModeIsNotFlagged) {
  // Like torch's `item`: 59 calls on CPU tensors return at once, one in 60 waits ~50x
  // longer for the GPU. One normal distribution would flag that one every time.
  AnomalyDetector detector;
  auto p = probe("item");
  std::mt19937_64 rng(17);
  std::uint64_t flagged = 0;
  for (int i = 0; i < 30'000; ++i) {
    const std::uint64_t fast = lognormal(rng) / 20;  // ~1 us
    flagged += detector.add(call(p, i % 60 == 59 ? 50 * fast : fast)) ? 1 : 0;
  }
  EXPECT_LE(flagged, 3u) << "the slow mode is learnt within the warm-up's first cycles";
  EXPECT_TRUE(detector.add(call(p, 750'000'000))) << "a 0.75 s wait is still flagged";
}

TEST(AnomalyDetector, FarBeyondTwoModesIsFlaggedWhateverTheZScore) {
  // Two ranks' synchronisations under one function: ~0.2 ms on the straggler, ~4 ms on
  // the rank that waits for it. A 0.5 s wait is far beyond both, though the wide normal
  // gives it a z-score under 6.
  AnomalyDetector detector;
  auto p = probe("cuCtxSynchronize_v2");
  std::mt19937_64 rng(19);
  for (int i = 0; i < 600; ++i) {
    const std::uint64_t base = lognormal(rng) / 4;  // ~5 us
    EXPECT_FALSE(detector.add(call(p, i % 2 ? base * 40 : base * 800))) << i;
  }
  CallEvent wait = call(p, 500'000'000);
  ASSERT_TRUE(detector.add(wait));
  EXPECT_LT(detector.summary().recent.back().score, 6) << "flagged by the percentile rule, not the z-score";
}

TEST(AnomalyDetector, SizesAreJudgedApart) {
  AnomalyDetector detector;
  auto p = probe("cudaMemcpy");
  p->spec.args = {{"dst"}, {"src"}, {"count"}};
  p->spec.derived = {{"bytes", DerivedArg::Op::kCopy, "count", ""}};
  std::mt19937_64 rng(13);
  auto copy = [&](std::uint64_t bytes, std::uint64_t dur) {
    CallEvent e = call(p, dur);
    e.nargs = 3;
    e.args[2] = bytes;
    return e;
  };
  // Small copies take ~20 us, 1 GiB ones ~50 ms: each is normal for its size.
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(detector.add(copy(4096, lognormal(rng))));
    if (i % 10 == 0) {
      EXPECT_FALSE(detector.add(copy(1ull << 30, 2'500 * lognormal(rng))));
    }
  }
  EXPECT_EQ(detector.functions(), 2u);
  EXPECT_TRUE(detector.add(copy(4096, 200'000'000)));
  EXPECT_EQ(detector.summary().recent.back().bytes, 4096u);
}

TEST(AnomalyDetector, SampledBucketsAreJudged) {
  AnomalyDetector detector;
  auto p = probe("cuLaunchKernel");
  CallTimings t;
  t.pid = 9;
  t.probe = p;
  for (int i = 0; i < 100; ++i) {
    t.count = 10;
    t.sum_ns = 10 * (20'000 + static_cast<std::uint64_t>(i % 7) * 1'000);
    EXPECT_FALSE(detector.add(t, 1'000));
  }
  t.count = 2;
  t.sum_ns = 2 * 200'000'000ull;
  EXPECT_TRUE(detector.add(t, 7'000));
  const auto& a = detector.summary().recent.back();
  EXPECT_TRUE(a.sampled);
  EXPECT_EQ(a.calls, 2u);
  EXPECT_EQ(a.pid, 9u);
  EXPECT_EQ(a.ts_ns, 7'000u);
  EXPECT_EQ(a.dur_ns, 200'000'000u);
}

TEST(AnomalyDetector, TheEnclosingOpCompletesTheAnomaly) {
  AnomalyDetector detector;
  auto p = probe("cudaMemcpyAsync");
  for (int i = 0; i < 300; ++i) detector.add(call(p, 20'000 + i % 5));
  CallEvent slow = call(p, 200'000'000, 1'000'000);
  slow.tid = 5;
  ASSERT_TRUE(detector.add(slow));
  EXPECT_EQ(detector.summary().recent.back().op, "");
  auto op = std::make_shared<ProbeInfo>();
  op->function = "aten::_local_scalar_dense";
  op->spec.domain = "torch";
  CallEvent other_thread = call(op, 300'000'000, 500'000);
  other_thread.tid = 6;
  detector.add(other_thread);
  EXPECT_EQ(detector.summary().recent.back().op, "");
  CallEvent enclosing = call(op, 200'100'000, 990'000);
  enclosing.tid = 5;
  detector.add(enclosing);
  EXPECT_EQ(detector.summary().recent.back().op, "aten::_local_scalar_dense");
  EXPECT_EQ(detector.summary().context_updates, 1u);
  // An outer op later does not replace the innermost.
  auto outer = std::make_shared<ProbeInfo>(*op);
  outer->function = "aten::item";
  CallEvent outer_call = call(outer, 300'000'000, 980'000);
  outer_call.tid = 5;
  detector.add(outer_call);
  EXPECT_EQ(detector.summary().recent.back().op, "aten::_local_scalar_dense");
}

TEST(AnomalyDetector, WarmUpIsRespected) {
  AnomalyDetector detector;
  auto p = probe("cudaMalloc");
  for (int i = 0; i < 199; ++i) detector.add(call(p, 1000 + i % 7));
  EXPECT_FALSE(detector.add(call(p, 1'000'000'000))) << "the 200th call is still warm-up";
  EXPECT_EQ(detector.summary().total, 0u);
  for (int i = 0; i < 300; ++i) detector.add(call(p, 1000 + i % 7));
  EXPECT_TRUE(detector.add(call(p, 1'000'000'000)));
  EXPECT_EQ(detector.summary().total, 1u);
}

TEST(AnomalyDetector, NeedsTenTimesTheMedianAsWellAsTheScore) {
  AnomalyDetector detector;
  auto p = probe("cudaFree");
  // A very narrow distribution: 9x the median is a huge z-score, and 160 ms more is news
  // alone, but it is not an anomaly.
  for (int i = 0; i < 1000; ++i) detector.add(call(p, 20'000'000 + i % 3));
  EXPECT_FALSE(detector.add(call(p, 60'000'000)));
  EXPECT_FALSE(detector.add(call(p, 180'000'000)));
  EXPECT_TRUE(detector.add(call(p, 250'000'000)));
}

// Less than `min_excess_ns` more than the median is no slow call, however many times the
// median it is: a 2 us call taking 600 us, an interrupt on a loaded machine.
TEST(AnomalyDetector, NeedsAMillisecondMoreThanTheMedian) {
  AnomalyDetector detector;
  auto p = probe("cudaMalloc");
  for (int i = 0; i < 1000; ++i) detector.add(call(p, 2'000 + i % 7));
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(detector.add(call(p, 600'000)));
  EXPECT_EQ(detector.summary().total, 0u);
}

TEST(AnomalyDetector, MemoryIsBounded) {
  AnomalyDetector::Options o = apart();
  o.max_functions = 100;
  o.keep = 5;
  o.warmup = 10;
  AnomalyDetector detector(o);
  std::vector<std::shared_ptr<ProbeInfo>> probes;
  for (int i = 0; i < 1000; ++i) {
    probes.push_back(probe("f" + std::to_string(i)));
    detector.add(call(probes.back(), 1000));
  }
  EXPECT_EQ(detector.functions(), 100u);
  EXPECT_EQ(detector.summary().functions, 100u);
  EXPECT_EQ(detector.summary().untracked_calls, 900u);
  auto p = probes[0];
  for (int i = 0; i < 100; ++i) detector.add(call(p, 1000 + i % 5));
  for (int i = 0; i < 20; ++i) {
    detector.add(call(p, 1'000'000'000));
    for (int j = 0; j < 50; ++j) detector.add(call(p, 1000 + j % 5));
  }
  EXPECT_GE(detector.summary().total, 5u);
  EXPECT_EQ(detector.summary().recent.size(), 5u);
}

// A loop whose calls take 20 us, and one in 50 of them 1,000 times that. Hundreds of
// flagged calls of one process and function are one entry, with their count, first and
// last time and the slowest; the first six are held until the seventh makes a group.
TEST(AnomalyDetector, AUniformlySlowLoopIsOneEntryWithItsCount) {
  AnomalyDetector detector;
  auto p = probe("cudaMalloc");
  std::mt19937_64 rng(13);
  std::uint64_t flagged = 0, planted = 0, last = 0, slowest = 0;
  for (std::uint64_t i = 0; i < 20'000; ++i) {
    const std::uint64_t ts = 1'000 * kMs + i * kMs / 2;  // 10 s of calls
    const bool slow = i > 500 && i % 50 == 0;
    const std::uint64_t dur = slow ? 1000 * lognormal(rng) : lognormal(rng);
    if (slow) {
      ++planted;
      last = ts;
      slowest = std::max(slowest, dur);
    }
    if (detector.add(call(p, dur, ts))) ++flagged;
  }
  const auto& s = detector.summary();
  ASSERT_GE(planted, 300u);
  EXPECT_EQ(s.total, planted);
  EXPECT_EQ(flagged, planted - 6);
  ASSERT_EQ(s.recent.size(), 1u);
  const Anomaly& a = s.recent[0];
  EXPECT_EQ(a.repeats, planted);
  EXPECT_EQ(a.calls, planted);
  EXPECT_EQ(a.last_ts_ns, last);
  EXPECT_EQ(a.max_dur_ns, slowest);
  EXPECT_LT(a.ts_ns, a.last_ts_ns);
  EXPECT_EQ(s.coalesced, planted - 1);
}

// The same loop with the kernel's run delay: the calls held off the CPU, whose own time
// is 30 times the others' (they resume cold), are judged by their own time against each
// other and none is flagged, while a call slow in itself still is, with the part of it
// that was a wait for a CPU.
TEST(AnomalyDetector, TimeHeldOffTheCpuIsNotTheCalls) {
  AnomalyDetector detector;
  auto p = probe("cudaMalloc");
  std::mt19937_64 rng(13);
  for (std::uint64_t i = 0; i < 20'000; ++i) {
    const std::uint64_t ts = 1'000 * kMs + i * kMs / 2;
    CallEvent e = call(p, lognormal(rng), ts);
    if (i > 500 && i % 50 == 0) {
      e.run_delay_ns = 1000 * e.dur_ns;
      e.dur_ns = 30 * e.dur_ns + e.run_delay_ns;
    }
    EXPECT_FALSE(detector.add(e)) << i;
  }
  CallEvent slow = call(p, 200 * kMs, 20'000 * kMs);
  slow.run_delay_ns = 3 * kMs;
  EXPECT_TRUE(detector.add(slow));
  const auto& s = detector.summary();
  EXPECT_EQ(s.total, 1u);
  ASSERT_EQ(s.recent.size(), 1u);
  EXPECT_EQ(s.recent[0].dur_ns, 200 * kMs);
  EXPECT_EQ(s.recent[0].run_delay_ns, 3 * kMs);
  EXPECT_EQ(s.level_shifts, 0u);
}

// The same in always-on mode: each second's sampled buckets of a sync loop, where the
// scheduler held dozens of calls a second off the CPU for milliseconds (the kernel counts
// them apart: CallTimings::held), raise nothing for ten minutes; a bucket of calls slow in
// themselves still is flagged, with its waits for a CPU.
TEST(AnomalyDetector, SampledCallsHeldOffTheCpuAreNotTheCalls) {
  AnomalyDetector detector;
  auto p = probe("cudaStreamSynchronize");
  std::mt19937_64 rng(17);
  std::uniform_int_distribution<std::uint64_t> held_n(10, 60);
  std::uniform_int_distribution<std::uint64_t> delay_us(500, 30'000);
  CallTimings fast, held;
  fast.pid = held.pid = 9;
  fast.probe = held.probe = p;
  for (std::uint64_t sec = 1; sec <= 600; ++sec) {
    const std::uint64_t now = sec * 1000 * kMs;
    fast.count = 5'000;
    fast.sum_ns = 5'000 * 900;
    EXPECT_FALSE(detector.add(fast, now)) << sec;
    // One bucket: calls of a few milliseconds, nearly all of it waits for a CPU.
    held.count = held.held = held_n(rng);
    held.held_delay_ns = 0;
    for (std::uint64_t i = 0; i < held.count; ++i) held.held_delay_ns += delay_us(rng) * 1'000;
    held.sum_ns = held.held_sum_ns = held.held_delay_ns + held.count * 20'000;
    EXPECT_FALSE(detector.add(held, now + 1)) << sec;
    detector.close_interval(now + 2);
  }
  EXPECT_EQ(detector.summary().total, 0u);
  CallTimings slow = held;
  slow.count = 4;
  slow.held = 1;
  slow.held_delay_ns = 5 * kMs;
  slow.held_sum_ns = 5 * kMs + 20'000;
  slow.sum_ns = 3 * 200 * kMs + slow.held_sum_ns;
  EXPECT_TRUE(detector.add(slow, 601'000 * kMs));
  const auto& s = detector.summary();
  ASSERT_EQ(s.recent.size(), 1u);
  EXPECT_TRUE(s.recent[0].sampled);
  EXPECT_EQ(s.recent[0].calls, 3u);
  EXPECT_EQ(s.recent[0].dur_ns, 200 * kMs);
  EXPECT_EQ(s.recent[0].run_delay_ns, 0u);
}

// Repeats merge per process, function and kind, within the window of the entry's last one.
TEST(AnomalyDetector, RepeatsMergePerProcessFunctionAndKindWithinTheWindow) {
  AnomalyDetector::Options o;
  o.coalesce_ns = 10'000 * kMs;
  AnomalyDetector detector(o);
  auto p = probe("cudaMemcpy");
  for (int i = 0; i < 1000; ++i) detector.add(call(p, 20'000 + i % 5));
  const auto slow = [&](std::uint32_t pid, std::uint64_t ts) {
    CallEvent e = call(p, 200'000'000, ts);
    e.pid = pid;
    EXPECT_TRUE(detector.add(e));
  };
  slow(42, 1'000 * kMs);
  slow(42, 9'000 * kMs);   // within 10 s of the first
  slow(42, 18'000 * kMs);  // within 10 s of the last: the window follows the repeats
  slow(43, 18'500 * kMs);  // another process
  slow(42, 40'000 * kMs);  // a quiet 22 s: a new entry
  CallTimings t;           // a sampled bucket of the same function: another kind
  t.pid = 42;
  t.probe = p;
  t.count = 4;
  t.sum_ns = 4 * 200'000'000ull;
  EXPECT_TRUE(detector.add(t, 40'001 * kMs));
  const auto& s = detector.summary();
  EXPECT_EQ(s.total, 6u);
  ASSERT_EQ(s.recent.size(), 4u);
  EXPECT_EQ(s.recent[0].repeats, 3u);
  EXPECT_EQ(s.recent[0].ts_ns, 1'000 * kMs);
  EXPECT_EQ(s.recent[0].last_ts_ns, 18'000 * kMs);
  EXPECT_EQ(s.recent[1].pid, 43u);
  EXPECT_EQ(s.recent[1].repeats, 1u);
  EXPECT_EQ(s.recent[1].last_ts_ns, s.recent[1].ts_ns);
  EXPECT_EQ(s.recent[2].repeats, 1u);
  EXPECT_EQ(s.recent[2].ts_ns, 40'000 * kMs);
  EXPECT_TRUE(s.recent[3].sampled);
  EXPECT_EQ(s.recent[3].calls, 4u);
  EXPECT_EQ(s.coalesced, 2u);
}

// Many processes failing slowly: the kept entries and the index of their keys stay bounded.
TEST(AnomalyDetector, CoalescingIsBounded) {
  AnomalyDetector::Options o;
  o.keep = 8;
  AnomalyDetector detector(o);
  auto p = probe("cudaMemcpy");
  for (int i = 0; i < 1000; ++i) detector.add(call(p, 20'000 + i % 5));
  for (std::uint32_t pid = 1; pid <= 1000; ++pid) {
    for (int k = 0; k < 3; ++k) {
      CallEvent e = call(p, 200'000'000, pid * kMs + static_cast<std::uint64_t>(k));
      e.pid = pid;
      EXPECT_TRUE(detector.add(e));
    }
    for (int j = 0; j < 5; ++j) detector.add(call(p, 20'000 + j));  // no level shift
  }
  const auto& s = detector.summary();
  EXPECT_EQ(s.total, 3000u);
  ASSERT_EQ(s.recent.size(), 8u);
  for (const auto& a : s.recent) EXPECT_EQ(a.repeats, 3u) << a.pid;
  EXPECT_EQ(s.recent.back().pid, 1000u);
  EXPECT_EQ(s.coalesced, 2000u);
}

TEST(AnomalyDetector, LoadTimeRegistrationsAreNotJudged) {
  AnomalyDetector detector;
  auto p = probe("__cudaRegisterFunction");
  for (int i = 0; i < 1000; ++i) detector.add(call(p, 700 + i % 5));
  EXPECT_FALSE(detector.add(call(p, 500'000)));
  EXPECT_EQ(detector.functions(), 0u);
}

TEST(AnomalyDetector, CallsWithoutDurationAreIgnored) {
  AnomalyDetector detector;
  auto p = probe("cudaGetDevice");
  CallEvent e = call(p, 0);
  EXPECT_FALSE(detector.add(e));
  EXPECT_EQ(detector.functions(), 0u);
}

}  // namespace
}  // namespace eacgm::analysis
