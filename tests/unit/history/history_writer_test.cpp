// HistoryWriter: one batch per flush into a real SQLite store; while the store refuses
// writes the batches wait in the spool (bounded: the oldest go first, counted) and are
// written in order when it answers again; stop() writes the last interval.
#include "history/history_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "history/sqlite_store.h"
#include "history_fixtures.h"
#include "refusing_store.h"

namespace eacgm::history {
namespace {

constexpr std::int64_t kS = 1'000'000'000;
using test::RefusingStore;

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

}  // namespace
}  // namespace eacgm::history
