// HostWaitDrain: deltas of the kernel's cumulative wait histograms, restarts of reused
// keys, each process handed on once and again at its exit, watching the processes of
// traced calls, and exited processes forgotten (keys and watch) only after their last
// waits were read.
#include "ingest/host_wait_drain.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>

namespace eacgm::ingest {
namespace {

// The maps as a test sets them (what the kernel would hold).
class RecordedWaits final : public HostWaitSource {
 public:
  std::vector<probe::HostWaitEntry> entries;
  std::vector<std::uint32_t> watching;
  std::vector<std::uint32_t> forgotten;
  int watch_calls = 0;
  std::map<std::uint32_t, eacgm_wait_proc> procs;  // what the kernel recorded
  std::vector<probe::HostWaitEntry> read_waits() override { return entries; }
  std::vector<std::pair<std::uint32_t, eacgm_wait_proc>> read_processes() override {
    return {procs.begin(), procs.end()};
  }
  void watch(std::uint32_t pid) override {
    ++watch_calls;
    if (std::find(watching.begin(), watching.end(), pid) == watching.end()) watching.push_back(pid);
  }
  std::vector<std::uint32_t> watched() override { return watching; }
  void forget(const std::vector<std::uint32_t>& pids) override {
    forgotten.insert(forgotten.end(), pids.begin(), pids.end());
    auto in = [&](std::uint32_t pid) { return std::count(pids.begin(), pids.end(), pid) > 0; };
    std::erase_if(entries, [&](const auto& e) { return in(e.key.pid); });
    std::erase_if(procs, [&](const auto& kv) { return in(kv.first); });
    std::erase_if(watching, in);
  }
};

eacgm_wait_proc proc(const char* comm, std::uint64_t start_ns, std::uint64_t exit_ns = 0) {
  eacgm_wait_proc p{};
  std::snprintf(p.comm, sizeof(p.comm), "%s", comm);
  p.start_ns = start_ns;
  p.exit_ns = exit_ns;
  return p;
}

probe::HostWaitEntry entry(std::uint32_t pid, std::uint32_t kind, std::uint32_t bucket, std::uint64_t count,
                           std::uint64_t sum_ns) {
  return probe::HostWaitEntry{{pid, kind, bucket, 0}, count, sum_ns};
}

struct DrainTest : ::testing::Test {
  RecordedWaits maps;
  int comm_reads = 0;
  HostWaitDrain drain{maps, [this](std::uint32_t pid) {
                        ++comm_reads;
                        return "p" + std::to_string(pid);
                      }};
  std::vector<HostWaitProcess> processes;
  std::vector<HostWaitTimings> out;
  void run() {
    processes.clear();
    out.clear();
    drain.drain(processes, out);
  }
};

TEST_F(DrainTest, DeliversWhatChangedSinceTheLastDrainWithTheKind) {
  maps.entries = {entry(10, EACGM_WAIT_FUTEX, 700, 3, 3000), entry(10, EACGM_WAIT_INPUT, 900, 1, 9000)};
  run();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].pid, 10u);
  EXPECT_EQ(out[0].kind, HostWaitKind::kFutex);
  EXPECT_EQ(out[0].bucket, 700u);
  EXPECT_EQ(out[0].count, 3u);
  EXPECT_EQ(out[0].sum_ns, 3000u);
  EXPECT_EQ(out[1].kind, HostWaitKind::kInputWait);

  maps.entries[0].count = 5;
  maps.entries[0].sum_ns = 5500;
  run();
  ASSERT_EQ(out.size(), 1u) << "the unchanged key is left out";
  EXPECT_EQ(out[0].count, 2u);
  EXPECT_EQ(out[0].sum_ns, 2500u);
  EXPECT_EQ(drain.counters().waits, 6u);
}

TEST_F(DrainTest, HandsOnEachProcessOnceAndAgainAtItsExit) {
  maps.entries = {entry(10, EACGM_WAIT_FUTEX, 700, 1, 100), entry(11, EACGM_WAIT_FUTEX, 700, 1, 100)};
  maps.procs[10] = proc("short_lived", 5000);
  maps.procs[11] = proc("", 6000);
  run();
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[0].pid, 10u);
  EXPECT_EQ(processes[0].comm, "short_lived");
  EXPECT_EQ(processes[0].start_ns, 5000u);
  EXPECT_EQ(processes[0].exit_ns, 0u);
  EXPECT_EQ(processes[1].comm, "p11") << "no name from the kernel: /proc";
  EXPECT_EQ(drain.counters().processes, 2u);
  run();
  EXPECT_TRUE(processes.empty()) << "nothing new";
  maps.procs[10].exit_ns = 9000;
  run();
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].pid, 10u);
  EXPECT_EQ(processes[0].exit_ns, 9000u);
  maps.procs[11] = proc("exec_d", 7000);  // an exec: a new start and name
  run();
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].comm, "exec_d");
  EXPECT_EQ(processes[0].start_ns, 7000u);
  EXPECT_EQ(comm_reads, 1);
}

TEST_F(DrainTest, AKeyMadeAnewStartsOverAndUnknownKindsAreDropped) {
  maps.entries = {entry(10, EACGM_WAIT_FUTEX, 700, 8, 800)};
  run();
  maps.entries = {entry(10, EACGM_WAIT_FUTEX, 700, 2, 200), entry(10, 99, 1, 1, 1)};
  run();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].count, 2u);
  EXPECT_EQ(out[0].sum_ns, 200u);
  EXPECT_EQ(drain.counters().unknown_kind, 1u);
}

TEST_F(DrainTest, ForgetsExitedProcessesWithWaitsOrWatches) {
  maps.entries = {entry(10, EACGM_WAIT_FUTEX, 700, 1, 100), entry(11, EACGM_WAIT_FUTEX, 700, 1, 100)};
  maps.procs[10] = proc("a", 1);
  maps.procs[11] = proc("b", 1);
  drain.watch(12);
  run();
  const std::size_t gone = drain.forget_unless([](std::uint32_t pid) { return pid == 11; });
  EXPECT_EQ(gone, 2u);
  std::sort(maps.forgotten.begin(), maps.forgotten.end());
  EXPECT_EQ(maps.forgotten, (std::vector<std::uint32_t>{10, 12}));
  EXPECT_EQ(drain.counters().processes, 1u);
  EXPECT_EQ(drain.counters().forgotten_pids, 2u);
  // A reused pid 10 starts from zero and is handed on again.
  maps.entries.push_back(entry(10, EACGM_WAIT_INPUT, 5, 1, 5));
  maps.procs[10] = proc("c", 2);
  run();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].pid, 10u);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].comm, "c");
}

TEST_F(DrainTest, TheWatchConsumerWatchesThePidsOfCallsAndCounts) {
  HostWaitWatch watch(drain);
  std::vector<CallEvent> calls(3);
  calls[0].pid = 5;
  calls[1].pid = 5;
  calls[2].pid = 6;
  watch.on_calls(calls);
  std::vector<CallCount> counts(1);
  counts[0].pid = 7;
  watch.on_counts(counts, {});
  EXPECT_EQ(maps.watching, (std::vector<std::uint32_t>{5, 6, 7}));
  EXPECT_EQ(maps.watch_calls, 3) << "the same pid twice in a row is watched once";
}

}  // namespace
}  // namespace eacgm::ingest
