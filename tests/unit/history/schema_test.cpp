// The tables' description holds together (interval tables start with their place, keys
// and indexes name columns, versions only grow, every value of an interval table rolls
// up); each table's row mapping writes its columns in order and in their types, and the
// readers read back as many columns as the queries select; each migration step adds what
// its version says.
#include "history/schema.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "history/schema_rows.h"
#include "history/schema_sql.h"

namespace eacgm::history {
namespace {

TEST(Schema, EveryTableHoldsTogether) {
  for (const Table* t : tables::kAll) {
    SCOPED_TRACE(std::string(t->name));
    EXPECT_LE(t->since, kSchemaVersion);
    int since = 0;
    for (const Column& c : t->columns) {
      SCOPED_TRACE(std::string(c.name));
      // A column a later version adds comes after the older ones (ALTER TABLE appends);
      // one of an older version than its table's came with the table.
      const int added = std::max({c.since, t->since, 1});
      EXPECT_GE(added, since);
      since = added;
      EXPECT_LE(c.since, kSchemaVersion);
      if (t->tiered() && !t->in_key(c.name) && c.name != "span_ns") {
        EXPECT_NE(c.combine, Combine::kNone) << "an interval table's values roll up";
      }
      if (c.combine == Combine::kMean) {
        EXPECT_NE(t->column("samples"), nullptr);
      }
      if (c.identity) {
        EXPECT_TRUE(t->key.size() == 1 && t->key[0] == c.name);
      }
    }
    for (auto k : t->key) {
      ASSERT_NE(t->column(k), nullptr) << k;
      EXPECT_LE(t->column(k)->since, std::max(t->since, 1)) << "a key is there from the start";
    }
    for (const Index& i : t->indexes) {
      for (auto c : i.columns) EXPECT_NE(t->column(c), nullptr) << i.name << ": " << c;
    }
    if (t->tiered()) {
      ASSERT_GE(t->columns.size(), 4u);
      EXPECT_EQ(t->columns[0].name, "tier");
      EXPECT_EQ(t->columns[1].name, "node");
      EXPECT_EQ(t->columns[2].name, "t_ns");
      EXPECT_EQ(t->columns[3].name, "span_ns");
      ASSERT_GE(t->key.size(), 3u);
      EXPECT_EQ(t->key[0], "tier");
      EXPECT_EQ(t->key[1], "node");
      EXPECT_EQ(t->key[2], "t_ns");
    }
  }
}

// Checks each value a mapping writes against the next column of its table.
class ColumnCheck {
 public:
  explicit ColumnCheck(const Table& t) : t_(t) {}
  void integer(std::int64_t) {
    const auto type = next(true).type;  // a name's id already found, or a number
    EXPECT_TRUE(type == ColumnType::kInt16 || type == ColumnType::kInt32 || type == ColumnType::kInt64)
        << where();
  }
  void real(double) { EXPECT_EQ(next(false).type, ColumnType::kReal) << where(); }
  void text(std::string_view) { EXPECT_EQ(next(false).type, ColumnType::kText) << where(); }
  void sketch(const StoredSketch&) { EXPECT_EQ(next(false).type, ColumnType::kBlob) << where(); }
  void name(const std::string&) { EXPECT_TRUE(next(true).name_id) << where(); }
  void null() { EXPECT_FALSE(next(false).not_null) << where() << " takes no NULL"; }
  std::size_t written() const { return at_; }

 private:
  const Column& next(bool name) {
    static const Column none("(past the last column)", ColumnType::kInt64);
    at_++;
    if (at_ > t_.columns.size()) {
      ADD_FAILURE() << t_.name << ": more values than columns";
      return none;
    }
    const Column& c = t_.columns[at_ - 1];
    if (!name && c.name_id) ADD_FAILURE() << where() << " holds a name's id, not a value";
    return c;
  }
  std::string where() const {
    return std::string(t_.name) + "." +
           std::string(at_ <= t_.columns.size() ? t_.columns[at_ - 1].name : "?");
  }
  const Table& t_;
  std::size_t at_ = 0;
};

template <class Row>
void check_row(const Table& t, const Row& row) {
  SCOPED_TRACE(std::string(t.name));
  ColumnCheck check(t);
  put_row(check, RowPlace{1, 2, 3, 4}, row);
  EXPECT_EQ(check.written(), t.columns.size());
}

TEST(Schema, EachRowMappingWritesItsTablesColumnsInOrder) {
  IntervalBatch b;
  b.mode = "always-on";
  check_row(tables::kIntervals, b);
  ProcessRecord p;
  check_row(tables::kProcesses, p);
  p.rank = 1;
  p.local_rank = 0;
  p.world_size = 2;
  check_row(tables::kProcesses, p);
  FunctionRecord f;
  check_row(tables::kFunctions, f);
  analysis::LatencySketch s;
  s.add(1000);
  f.latency = stored(s);
  check_row(tables::kFunctions, f);
  {
    ColumnCheck check(tables::kFunctions);
    put_row(check, RowPlace{}, FunctionKey{1, 2, 3, 4}, FunctionSums::of(f));
    EXPECT_EQ(check.written(), tables::kFunctions.columns.size());
  }
  check_row(tables::kKernels, KernelRecord{"k", 1});
  check_row(tables::kGpus, GpuRecord{});
  check_row(tables::kGpus, GpuRecord{0,   "GPU-1", "H100", 1,   1.0, 2,   3.0, 4,   5,   6.0,
                                     7.0, 8,       0.9,    1.0, 0.5, 0.6, 0.2, 0.3, 9.0, 10});
  check_row(tables::kGpuProcesses, GpuProcessRecord{});
  check_row(tables::kGpuProcesses, GpuProcessRecord{1, {2, 3}, 4, 5, 6.0, 7, 8.0, 9.0});
  check_row(tables::kAnomalies, AnomalyRecord{});
  check_row(tables::kLeaks, LeakRecord{});
  // Every table a batch fills is mapped.
  int filled = 0;
  for_each_table(IntervalBatch{}, [&filled](const Table&, const auto&) { ++filled; });
  EXPECT_EQ(filled, 7);
}

// A row of zeros that remembers the last column read.
struct ZeroRow {
  mutable int last = -1;
  bool is_null(int c) const { return seen(c, true); }
  std::int64_t i64(int c) const { return seen(c, 0); }
  double f64(int c) const { return seen(c, 0.0); }
  std::string text(int c) const { return seen(c, std::string()); }
  std::span<const std::uint8_t> blob(int c) const { return seen(c, std::span<const std::uint8_t>()); }
  template <class T>
  T seen(int c, T v) const {
    last = std::max(last, c);
    return v;
  }
};

TEST(Schema, EachReaderReadsTheColumnsItsQuerySelects) {
  ZeroRow row;
  StoredProcess p;
  EXPECT_EQ(static_cast<std::size_t>(get_row(row, 0, p)), tables::kProcesses.columns.size());
  StoredAnomaly a;
  EXPECT_EQ(static_cast<std::size_t>(get_row(row, 0, a)), tables::kAnomalies.columns.size());
  StoredLeak l;
  EXPECT_EQ(static_cast<std::size_t>(get_row(row, 0, l)), tables::kLeaks.columns.size());
  // A GPU point: node, step, then the columns of gpus from `gpu` on.
  row.last = -1;
  get_gpu_point(row);
  EXPECT_EQ(static_cast<std::size_t>(row.last + 1), 2 + tables::kGpus.columns.size() - 4);
}

TEST(Schema, EachStepAddsWhatItsVersionSays) {
  for (Dialect d : {Dialect::kSqlite, Dialect::kPostgres}) {
    const std::string v1 = migration_step(d, 1);
    const std::string v2 = migration_step(d, 2);
    const std::string v3 = migration_step(d, 3);
    EXPECT_NE(v1.find("CREATE TABLE IF NOT EXISTS functions("), std::string::npos) << v1;
    EXPECT_EQ(v1.find("job"), std::string::npos) << v1;
    EXPECT_EQ(v1.find("node_clocks"), std::string::npos) << v1;
    EXPECT_NE(v2.find("ADD COLUMN"), std::string::npos) << v2;
    EXPECT_NE(v2.find("processes_job"), std::string::npos) << v2;
    EXPECT_EQ(v2.find("CREATE TABLE"), std::string::npos) << v2;
    EXPECT_EQ(v3.find("CREATE TABLE IF NOT EXISTS node_clocks("), 0u) << v3;
    // Version 5: the GPM activities, columns of gpus and nothing else.
    const std::string v5 = migration_step(d, 5);
    EXPECT_EQ(v5.find("CREATE TABLE"), std::string::npos) << v5;
    for (const char* c : {"sm_active_mean", "sm_active_max", "tensor_active_mean", "tensor_active_max",
                          "dram_active_mean", "dram_active_max"}) {
      EXPECT_NE(v5.find(std::string("ALTER TABLE gpus ADD COLUMN ") +
                        (d == Dialect::kPostgres ? "IF NOT EXISTS " : "") + c + " "),
                std::string::npos)
          << v5;
    }
    // Version 6: the energy, columns of gpus and nothing else.
    const std::string v6 = migration_step(d, 6);
    EXPECT_EQ(v6.find("CREATE TABLE"), std::string::npos) << v6;
    for (const char* c : {"energy_mj", "energy_counter_ns"}) {
      EXPECT_NE(v6.find(std::string("ALTER TABLE gpus ADD COLUMN ") +
                        (d == Dialect::kPostgres ? "IF NOT EXISTS " : "") + c + " "),
                std::string::npos)
          << v6;
    }
    EXPECT_EQ(migration_step(d, kSchemaVersion + 1), "");
  }
}

}  // namespace
}  // namespace eacgm::history
