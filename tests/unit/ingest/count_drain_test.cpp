// CountDrain: deltas of the kernel's cumulative always-on maps, restarts of reused keys,
// and exited processes forgotten only after their last counts were read.
#include "ingest/count_drain.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ingest/enricher_stages.h"

namespace eacgm::ingest {
namespace {

// The maps as a test sets them (what the kernel would hold).
class RecordedMaps final : public CountSource {
 public:
  std::vector<probe::CountEntry> counts;
  std::vector<probe::DurationEntry> durations;
  std::vector<std::uint32_t> forgotten;
  bool complete = true;
  std::vector<probe::CountEntry> read_counts() override { return counts; }
  bool read_complete() const override { return complete; }
  std::vector<probe::DurationEntry> read_durations() override { return durations; }
  void forget_keys(const std::vector<std::uint32_t>& pids, const std::vector<eacgm_count_key>&,
                   const std::vector<eacgm_duration_key>&) override {
    forgotten.insert(forgotten.end(), pids.begin(), pids.end());
    std::erase_if(counts, [&](const auto& e) { return std::count(pids.begin(), pids.end(), e.key.pid) > 0; });
    std::erase_if(durations,
                  [&](const auto& e) { return std::count(pids.begin(), pids.end(), e.key.pid) > 0; });
  }
};

struct DrainFixture : ::testing::Test {
  DrainFixture() {
    ProbeInfo info;
    info.function = "cuStreamSynchronize";
    info.spec.name = "cuStreamSynchronize";
    info.spec.domain = "cuda_driver";
    info.counted = true;
    probe = table.add(std::move(info));
  }
  probe::CountEntry count(std::uint32_t pid, std::uint64_t calls, std::uint64_t bytes = 0) {
    probe::CountEntry e;
    e.key = {pid, probe->id, 0, 0};
    e.calls = calls;
    e.bytes = bytes;
    return e;
  }
  probe::ProbeTable table;
  std::shared_ptr<const ProbeInfo> probe;
  EnricherChain chain;
  RecordedMaps maps;
};

TEST_F(DrainFixture, DeliversWhatChangedSinceTheLastDrain) {
  CountDrain drain(maps, table, chain);
  maps.counts = {count(10, 5, 500)};
  std::vector<CallCount> counts;
  std::vector<CallTimings> timings;
  drain.drain(counts, timings);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].calls, 5u);
  EXPECT_EQ(counts[0].bytes, 500u);
  EXPECT_EQ(counts[0].probe, probe);

  maps.counts = {count(10, 12, 900)};
  counts.clear();
  drain.drain(counts, timings);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].calls, 7u);
  EXPECT_EQ(counts[0].bytes, 400u);

  counts.clear();
  drain.drain(counts, timings);  // nothing new: nothing delivered
  EXPECT_TRUE(counts.empty());
  EXPECT_EQ(drain.counters().counted_calls, 12u);
}

TEST_F(DrainFixture, AKeyMadeAnewCountsFromZero) {
  CountDrain drain(maps, table, chain);
  std::vector<CallCount> counts;
  std::vector<CallTimings> timings;
  maps.counts = {count(10, 50)};
  drain.drain(counts, timings);
  maps.counts = {count(10, 3)};  // deleted and created again (a reused pid)
  counts.clear();
  drain.drain(counts, timings);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].calls, 3u);
}

TEST_F(DrainFixture, TimingsAreDeltasPerBucket) {
  CountDrain drain(maps, table, chain);
  probe::DurationEntry d;
  d.key = {10, probe->id, eacgm_hist_key(1000), 0};
  d.count = 2;
  d.sum_ns = 2000;
  d.errors = 1;
  maps.durations = {d};
  std::vector<CallCount> counts;
  std::vector<CallTimings> timings;
  drain.drain(counts, timings);
  // The map's next values, drained: one bucket's deltas.
  const auto next = [&](std::uint64_t count, std::uint64_t sum_ns) {
    d.count = count;
    d.sum_ns = sum_ns;
    maps.durations = {d};
    timings.clear();
    drain.drain(counts, timings);
    EXPECT_EQ(timings.size(), 1u);
    return timings.empty() ? CallTimings{} : timings[0];
  };
  d.held = 1;  // one of the three new calls was held off the CPU
  d.held_sum_ns = 1100;
  d.held_delay_ns = 900;
  CallTimings t = next(5, 5100);
  EXPECT_EQ(t.count, 3u);
  EXPECT_EQ(t.sum_ns, 3100u);
  EXPECT_EQ(t.errors, 0u);
  EXPECT_EQ(t.bucket, eacgm_hist_key(1000));
  EXPECT_EQ(t.held, 1u);
  EXPECT_EQ(t.held_sum_ns, 1100u);
  EXPECT_EQ(t.held_delay_ns, 900u);
  EXPECT_EQ(drain.counters().sampled_held_calls, 1u);
  t = next(6, 6100);
  EXPECT_EQ(t.count, 1u);
  EXPECT_EQ(t.held, 0u);
  EXPECT_EQ(t.held_sum_ns, 0u);
}

TEST_F(DrainFixture, ForgetsOnlyDeadProcessesAndUnknownProbesAreDropped) {
  CountDrain drain(maps, table, chain);
  probe::CountEntry stray = count(12, 4);
  stray.key.probe_id = 999;  // never assigned
  maps.counts = {count(10, 1), count(11, 2), stray};
  std::vector<CallCount> counts;
  std::vector<CallTimings> timings;
  drain.drain(counts, timings);
  EXPECT_EQ(counts.size(), 2u);
  EXPECT_EQ(drain.counters().unknown_probe, 1u);
  EXPECT_EQ(drain.forget_unless([](std::uint32_t pid) { return pid != 11; }), 1u);
  EXPECT_EQ(maps.forgotten, std::vector<std::uint32_t>{11});
  EXPECT_EQ(drain.counters().forgotten_pids, 1u);
}

// A process that ends between the read and the check must keep its keys until a read
// made after it ended: the calls it made in between are counted then.
TEST_F(DrainFixture, DeletesOnlyTheKeysOfProcessesGoneBeforeTheRead) {
  CountDrain drain(maps, table, chain);
  maps.counts = {count(10, 1), count(11, 2)};
  std::vector<CallCount> counts;
  std::vector<CallTimings> timings;
  bool ended = false;  // pid 11 ends while its counts are read
  const auto alive = [&](std::uint32_t pid) { return pid != 11 || !ended; };
  drain.drain(
      counts, timings, [&] { ended = true; }, alive);
  EXPECT_TRUE(maps.forgotten.empty());
  maps.counts = {count(10, 1), count(11, 5)};  // its last 3 calls, after the read
  counts.clear();
  drain.drain(counts, timings, {}, alive);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].pid, 11u);
  EXPECT_EQ(counts[0].calls, 3u);
  EXPECT_EQ(maps.forgotten, std::vector<std::uint32_t>{11});
  EXPECT_EQ(drain.counters().forgotten_pids, 1u);
}

// A read that stopped midway (a batch lookup failed) may have missed a gone process's
// keys, whose last calls were made after their previous read: none are deleted then.
TEST_F(DrainFixture, KeepsTheKeysOfGoneProcessesAfterAReadThatMissedSome) {
  CountDrain drain(maps, table, chain);
  maps.counts = {count(10, 1), count(11, 2)};
  std::vector<CallCount> counts;
  std::vector<CallTimings> timings;
  drain.drain(counts, timings);
  const auto alive = [](std::uint32_t pid) { return pid != 11; };
  maps.counts = {count(10, 1)};  // pid 11's key (now 5 calls) was not reached
  maps.complete = false;
  counts.clear();
  drain.drain(counts, timings, {}, alive);
  EXPECT_TRUE(counts.empty());
  EXPECT_TRUE(maps.forgotten.empty());
  maps.counts = {count(10, 1), count(11, 5)};
  maps.complete = true;
  drain.drain(counts, timings, {}, alive);
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].pid, 11u);
  EXPECT_EQ(counts[0].calls, 3u);
  EXPECT_EQ(maps.forgotten, std::vector<std::uint32_t>{11});
}

class DropSink final : public CallSink {
 public:
  void take(CallEvent&) override {}
};

// A launch counted in the maps is named by a call made before it whose record the
// reader takes in between reading the maps and naming (after_read), as the ring buffer
// may still hold it then.
TEST(CountDrainNames, ALaunchIsNamedByTheRecordsTakenInAfterTheMapsWereRead) {
  probe::ProbeTable table;
  ProbeInfo launch_info;
  launch_info.function = launch_info.spec.name = "cuLaunchKernel";
  launch_info.spec.domain = "cuda_driver";
  launch_info.spec.args = {ArgSpec{"f"}};
  launch_info.spec.derived = {{"kernel", DerivedArg::Op::kKernelName, "f", ""}};
  launch_info.counted = true;
  auto launch = table.add(std::move(launch_info));
  ProbeInfo naming_info;
  naming_info.function = naming_info.spec.name = "cuModuleGetFunction";
  naming_info.spec.domain = "cuda_driver";
  naming_info.spec.args = {ArgSpec{"func"}, ArgSpec{"module"}, ArgSpec{"name"}};
  naming_info.spec.args[2].kind = ArgKind::kString;
  auto naming = table.add(std::move(naming_info));

  EnricherChain chain;
  chain.add(make_kernel_name_stage(nullptr));
  RecordedMaps maps;
  probe::CountEntry e;
  e.key = {42, launch->id, 0xf00d, 0};
  e.calls = 3;
  maps.counts = {e};
  CountDrain drain(maps, table, chain);
  std::vector<CallCount> counts;
  std::vector<CallTimings> timings;
  drain.drain(counts, timings, [&] {
    CallEvent named;
    named.pid = named.tid = 42;
    named.probe = naming;
    named.has_exit = true;
    named.nargs = 3;
    named.args[0] = 0xf00d;
    named.str = "_Z6squarePf";
    DropSink sink;
    chain.process(named, sink);
  });
  ASSERT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts[0].kernel, "square(float*)");
}

}  // namespace
}  // namespace eacgm::ingest
