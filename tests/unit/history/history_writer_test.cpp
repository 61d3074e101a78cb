// HistoryWriter: one batch per flush into a real SQLite store; while the store refuses
// writes the batches wait in the spool (bounded: the oldest go first, counted) and are
// written in order when it answers again; stop() writes the last interval. The node's
// NCCL rank standings are written at most each second while a rank waits, else when they
// change or each interval, and the job's rows of every node are handed back each poll.
#include "history/history_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "analysis/nccl_progress.h"
#include "history/sqlite_store.h"
#include "history_fixtures.h"

namespace eacgm::history {
namespace {

constexpr std::int64_t kS = 1'000'000'000;

// The real SQLite store, refusing writes while `down` (as a PostgreSQL server that went
// away would): the spool's stand-in for an unreachable store.
class RefusingStore final : public Store {
 public:
  explicit RefusingStore(std::unique_ptr<Store> real) : real_(std::move(real)) {}
  bool down = false;
  Status write(const std::string& node, const IntervalBatch& b) override {
    if (down) return make_error("connection refused");
    return real_->write(node, b);
  }
  Status maintain(const std::string& node, std::int64_t now, const Retention& r) override {
    return real_->maintain(node, now, r);
  }
  Result<ProcessPage> processes(const HistoryQuery& q, Tier t) override { return real_->processes(q, t); }
  Result<Page<StoredJob>> jobs(const HistoryQuery& q, Tier t) override { return real_->jobs(q, t); }
  Result<std::vector<HeldGpuRow>> held_gpus(const HistoryQuery& q, const JobSelector& s, Tier t) override {
    return real_->held_gpus(q, s, t);
  }
  Result<JobTimeRows> job_time_rows(const HistoryQuery& q, const JobSelector& s, Tier t) override {
    return real_->job_time_rows(q, s, t);
  }
  Result<Page<StoredNode>> nodes(const HistoryQuery& q, Tier t) override { return real_->nodes(q, t); }
  Result<std::vector<StoredFunction>> functions(const HistoryQuery& q, Tier t) override {
    return real_->functions(q, t);
  }
  Result<std::vector<StoredKernel>> kernels(const HistoryQuery& q, Tier t) override {
    return real_->kernels(q, t);
  }
  Result<std::vector<StoredGpuPoint>> gpus(const HistoryQuery& q, Tier t) override {
    return real_->gpus(q, t);
  }
  Result<Page<StoredAnomaly>> anomalies(const HistoryQuery& q) override { return real_->anomalies(q); }
  Result<Page<StoredLeak>> leaks(const HistoryQuery& q) override { return real_->leaks(q); }
  Status write_standings(const std::string& node, std::span<const analysis::RankReport> rows,
                         std::int64_t written_ns) override {
    if (down) return make_error("connection refused");
    return real_->write_standings(node, rows, written_ns);
  }
  Result<std::vector<analysis::RankReport>> standings(std::span<const std::uint64_t> comm_ids,
                                                      std::int64_t since_ns, std::size_t limit) override {
    if (down) return make_error("connection refused");
    return real_->standings(comm_ids, since_ns, limit);
  }
  Result<std::uint64_t> size_bytes() override { return real_->size_bytes(); }
  std::string description() const override { return real_->description(); }

 private:
  std::unique_ptr<Store> real_;
};

struct Harness {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("eacgm-writer-" + std::to_string(getpid()));
  std::int64_t now = 1'790'000'000 * kS;
  analysis::ProcessCalls calls;
  std::shared_ptr<const analysis::AnalysisSnapshot> snap;
  RefusingStore* store = nullptr;
  std::vector<std::string> log;
  std::unique_ptr<HistoryWriter> writer;

  explicit Harness(std::size_t spool) {
    std::filesystem::remove_all(dir);
    auto real = SqliteStore::open((dir / "h.db").string());
    EXPECT_TRUE(real);
    auto refusing = std::make_unique<RefusingStore>(std::move(real).value());
    store = refusing.get();
    HistoryOptions o;
    o.node = "n1";
    o.spool_batches = spool;
    o.now_ns = [this] { return now; };
    writer = std::make_unique<HistoryWriter>(
        std::move(refusing), [this] { return snap; },
        IntervalBuilder(nullptr, [](std::uint32_t) { return std::optional<std::int64_t>(1); }), o,
        [this](const std::string& line) { log.push_back(line); });
  }
  ~Harness() {
    writer.reset();
    std::filesystem::remove_all(dir);
  }
  // One interval: `n` calls, then a flush 10 s later.
  void interval(int n) {
    static const auto p = test::probe("cuda", "cudaMemcpy");
    for (int i = 0; i < n; ++i) calls.add(test::call(p, 77, 100));
    snap = std::make_shared<analysis::AnalysisSnapshot>(test::snapshot_of(calls));
    now += 10 * kS;
    writer->flush_once(false);
  }
  std::uint64_t stored_calls() {
    HistoryQuery q;
    q.from_ns = 0;
    q.to_ns = now + kS;
    auto f = store->functions(q, Tier::kRaw);
    EXPECT_TRUE(f) << f.error();
    return f && !f->empty() ? f->front().calls : 0;
  }
};

TEST(HistoryWriter, SpoolsWhileTheStoreIsDownAndWritesInOrderAfter) {
  Harness h(100);
  h.interval(3);
  EXPECT_EQ(h.stored_calls(), 3u);
  h.store->down = true;
  for (int i = 0; i < 4; ++i) h.interval(10);
  StoreStats s = h.writer->stats();
  EXPECT_FALSE(s.healthy);
  EXPECT_GE(s.write_failures, 1u);
  EXPECT_EQ(s.spooled_batches, 4u);
  ASSERT_EQ(h.log.size(), 1u);  // one line for the outage, not one per try
  EXPECT_NE(h.log[0].find("connection refused"), std::string::npos);
  h.store->down = false;
  h.now += 400 * kS;  // past the back-off
  h.interval(1);
  s = h.writer->stats();
  EXPECT_TRUE(s.healthy);
  EXPECT_EQ(s.spooled_batches, 0u);
  EXPECT_EQ(s.batches_dropped, 0u);
  EXPECT_EQ(h.stored_calls(), 3u + 40u + 1u);
  EXPECT_EQ(h.log.back(), "store sqlite:" + (h.dir / "h.db").string() + ": writing again");
}

TEST(HistoryWriter, AFullSpoolDropsTheOldestAndCountsThem) {
  Harness h(2);
  h.store->down = true;
  for (int i = 0; i < 5; ++i) h.interval(10);
  StoreStats s = h.writer->stats();
  EXPECT_EQ(s.spooled_batches, 2u);
  EXPECT_EQ(s.batches_dropped, 3u);
  EXPECT_EQ(s.rows_dropped, 6u);  // a process row and a function row each
  h.store->down = false;
  h.now += 400 * kS;
  h.writer->flush_once(false);  // nothing new; the spool goes out
  // Written plus dropped is what was made: 2 batches of 10 calls kept.
  EXPECT_EQ(h.stored_calls(), 20u);
}

TEST(HistoryWriter, StopWritesTheLastInterval) {
  Harness h(10);
  static const auto p = test::probe("cuda", "cudaFree");
  for (int i = 0; i < 7; ++i) h.calls.add(test::call(p, 5, 100));
  h.snap = std::make_shared<analysis::AnalysisSnapshot>(test::snapshot_of(h.calls));
  h.writer->start();
  h.writer->stop();
  EXPECT_EQ(h.stored_calls(), 7u);
  EXPECT_EQ(h.writer->stats().batches_written, 1u);
}

TEST(HistoryWriter, WritesTheNodesNcclStandingsWhenDueAndHandsBackTheJobsRows) {
  Harness h(10);
  std::vector<std::shared_ptr<const analysis::FleetReports>> handed;
  h.writer->set_fleet_sink([&handed](auto reports) { handed.push_back(std::move(reports)); });
  // Another node's rank of the same communicator, and one of another communicator.
  const analysis::NcclRankStanding behind{1, 501, 5, 5, 0, analysis::NcclCollective::kAllReduce, {}};
  ASSERT_TRUE(h.store->write_standings(
      "n2", std::vector<analysis::RankReport>{{"", 0xc0, 2, behind, h.now, 0}, {"", 0xd0, 2, behind, h.now, 0}},
      h.now));
  const auto standing = [&h](std::uint64_t waiting_ns, std::uint64_t entered = 6) {
    analysis::AnalysisSnapshot snap;
    snap.edit<analysis::NcclProgressSummary>().comms.push_back(
        {0xc0, 2, {{0, 500, entered, 5, waiting_ns, analysis::NcclCollective::kAllReduce, {}}}});
    h.snap = std::make_shared<analysis::AnalysisSnapshot>(std::move(snap));
  };
  const auto written_at = [&h]() -> std::int64_t {
    const std::uint64_t comm[] = {0xc0};
    auto rows = h.store->standings(comm, 0, 10);
    EXPECT_TRUE(rows) << rows.error();
    for (const auto& r : *rows) {
      if (r.node == "n1") return r.written_ns;
    }
    return -1;
  };
  const std::int64_t t0 = h.now;

  standing(2 * kS);
  h.writer->poll_once();
  EXPECT_EQ(written_at(), t0);
  ASSERT_EQ(handed.size(), 1u);
  EXPECT_EQ(handed[0]->node, "n1");
  EXPECT_EQ(handed[0]->read_ns, t0);
  EXPECT_EQ(handed[0]->stale_ns, static_cast<std::uint64_t>(30 * kS)) << "three 10 s intervals";
  ASSERT_EQ(handed[0]->rows.size(), 2u) << "its own row and n2's of communicator 0xc0";
  std::set<std::string> nodes;
  for (const auto& r : handed[0]->rows) nodes.insert(r.node);
  EXPECT_EQ(nodes, (std::set<std::string>{"n1", "n2"}));

  // A rank waits: written again a second later, not before.
  h.now += kS / 2;
  standing(2 * kS + kS / 2);
  h.writer->poll_once();
  EXPECT_EQ(written_at(), t0);
  h.now += kS / 2;
  standing(3 * kS);
  h.writer->poll_once();
  EXPECT_EQ(written_at(), t0 + kS);
  EXPECT_EQ(handed.size(), 3u) << "read back at each poll";

  // Nobody waits and nothing changes: written again only after the interval.
  h.now += kS;
  standing(0, 7);
  h.writer->poll_once();
  EXPECT_EQ(written_at(), t0 + 2 * kS) << "it changed";
  h.now += 5 * kS;
  h.writer->poll_once();
  EXPECT_EQ(written_at(), t0 + 2 * kS);
  h.now += 5 * kS;
  h.writer->poll_once();
  EXPECT_EQ(written_at(), t0 + 12 * kS);

  // Its rank exits: its row goes, n2's stay; nothing is read back for no communicator.
  h.now += kS;
  h.snap = std::make_shared<analysis::AnalysisSnapshot>();
  h.writer->poll_once();
  EXPECT_EQ(written_at(), -1);
  EXPECT_TRUE(handed.back()->rows.empty());
  EXPECT_EQ(h.store->standings({}, 0, 10)->size(), 2u);

  // While the store refuses, the writer says so once and keeps going.
  standing(kS);
  h.store->down = true;
  h.now += kS;
  h.writer->poll_once();
  h.now += kS;
  h.writer->poll_once();
  EXPECT_EQ(std::count_if(h.log.begin(), h.log.end(),
                          [](const std::string& l) {
                            return l.find("writing NCCL standings failed") != std::string::npos;
                          }),
            1);
}

}  // namespace
}  // namespace eacgm::history
