// The fleet shipper's rounds: the local store's rolled rows and facts after its marks,
// shipped in bounded transactions, the marks moved on after each commit.
#include "history/fleet_shipper.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "history/schema_sql.h"
#include "history/store_url.h"

namespace eacgm::history {
namespace {

constexpr std::int64_t kMaxBackoffNs = 300'000'000'000;  // 5 minutes
constexpr std::int64_t kFirstBackoffNs = 1'000'000'000;
constexpr std::int64_t kMinuteNs = 60'000'000'000;
constexpr std::int64_t kHourNs = 60 * kMinuteNs;

std::int64_t floor_to(std::int64_t t, std::int64_t step) { return t - ((t % step) + step) % step; }

bool job_rollup(const Table& t) { return &t == &tables::kJobGpus || &t == &tables::kJobCalls; }

// The interval tables a tier's shipment carries: the job rollups apart.
std::vector<const Table*> tier_tables(bool jobs) {
  std::vector<const Table*> out;
  for (const Table* t : tables::kAll) {
    // The fleet store's own rollups are never shipped: a shipment's empty part would delete them.
    if (t->tiered() && !t->fleet_rollup && job_rollup(*t) == jobs) out.push_back(t);
  }
  return out;
}

int column_index(const Table& t, std::string_view name) {
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    if (t.columns[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace

FleetShipper::FleetShipper(FleetShipperOptions options, Log log)
    : options_(std::move(options)),
      log_(std::move(log)),
      description_(redact_store_url(options_.fleet_url)) {}

FleetShipper::~FleetShipper() {
  try {
    stop();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; stop() logs its failures
  }
}

std::string FleetShipper::description() const { return description_; }

FleetStats FleetShipper::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void FleetShipper::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void FleetShipper::ship_soon() {
  std::lock_guard<std::mutex> lock(mutex_);
  soon_ = true;
  wake_.notify_all();
}

void FleetShipper::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) return;
    stop_ = true;
    wake_.notify_all();
  }
  if (!thread_.joinable()) return;  // never started (tests drive ship_once)
  thread_.join();
  // The facts of the last interval (a process's exit), unless the fleet store is away.
  if (!failing_) (void)ship_once();
}

void FleetShipper::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    // A failed round is tried again after its back-off, not at the next maintenance.
    auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.every);
    if (failing_)
      wait = std::min(wait,
                      std::chrono::nanoseconds(std::max<std::int64_t>(retry_at_ns_ - options_.now_ns(), 0)));
    wake_.wait_for(lock, wait, [this] { return stop_ || soon_; });
    if (stop_) break;
    soon_ = false;
    lock.unlock();
    const std::int64_t now = options_.now_ns();
    if (!failing_ || now >= retry_at_ns_) {
      if (auto st = ship_once(); !st) {
        if (!failing_ && log_)
          log_("fleet store " + description_ + ": shipping failed (retried): " + st.error());
        failing_ = true;
        backoff_ns_ = backoff_ns_ == 0 ? kFirstBackoffNs : std::min(backoff_ns_ * 2, kMaxBackoffNs);
        retry_at_ns_ = now + backoff_ns_;
      } else {
        if (failing_ && log_) log_("fleet store " + description_ + ": shipping again");
        failing_ = false;
        backoff_ns_ = 0;
      }
    }
    lock.lock();
  }
}

Status FleetShipper::open() {
  if (!local_) {
    // The writer made the file; the shipper reads it and keeps its marks there.
    auto db = SqliteDb::open(options_.local_path, false);
    if (!db) return make_error(fmt::format("store sqlite:{}: {}", options_.local_path, db.error()));
    local_.emplace(std::move(db).value());
  }
  if (!fleet_) {
    auto store = PostgresStore::open(options_.fleet_url);
    if (!store) return make_error(store.error());
    fleet_ = std::move(store).value();
  }
  return {};
}

Result<std::int64_t> FleetShipper::local_meta(const std::string& key, std::int64_t fallback) {
  auto stmt = local_->prepare("SELECT value FROM meta WHERE key = ?");
  if (!stmt) return make_error(stmt.error());
  stmt->bind(1, std::string_view(key));
  auto row = stmt->step();
  if (!row) return make_error(row.error());
  return *row ? stmt->i64(0) : fallback;
}

Status FleetShipper::set_local(const std::vector<std::pair<std::string, std::int64_t>>& marks) {
  if (auto st = local_->exec("BEGIN IMMEDIATE"); !st) return st;
  for (const auto& [key, value] : marks) {
    auto stmt = local_->prepare(
        "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    Status st;
    if (!stmt) {
      st = make_error(stmt.error());
    } else {
      stmt->bind(1, std::string_view(key));
      stmt->bind(2, value);
      st = stmt->run();
    }
    if (!st) {
      (void)local_->exec("ROLLBACK");
      return st;
    }
  }
  return local_->exec("COMMIT");
}

Result<std::string> FleetShipper::name_of(std::int64_t id) {
  if (auto it = names_.find(id); it != names_.end()) return it->second;
  auto stmt = local_->prepare("SELECT name FROM names WHERE id = ?");
  if (!stmt) return make_error(stmt.error());
  stmt->bind(1, id);
  auto row = stmt->step();
  if (!row) return make_error(row.error());
  if (!*row) return make_error(fmt::format("names: no name of id {}", id));
  std::string name = stmt->text(0);
  if (names_.size() >= 65536) names_.clear();
  names_.emplace(id, name);
  return name;
}

Status FleetShipper::read_rows(const Table& t, const std::string& where,
                               const std::function<void(SqliteStmt&)>& bind, std::vector<ShippedRow>& rows,
                               const std::string& lead, std::vector<std::int64_t>* leads) {
  auto stmt = local_->prepare(fmt::format("SELECT {}{} FROM {} WHERE {}", lead.empty() ? "" : lead + ", ",
                                          column_list(t), t.name, where));
  if (!stmt) return make_error(stmt.error());
  bind(*stmt);
  const int first = lead.empty() ? 0 : 1;
  for (;;) {
    auto more = stmt->step();
    if (!more) return make_error(more.error());
    if (!*more) break;
    if (leads != nullptr) leads->push_back(stmt->i64(0));
    ShippedRow row;
    row.reserve(t.columns.size());
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      const Column& c = t.columns[i];
      const int col = first + static_cast<int>(i);
      if (stmt->is_null(col)) {
        row.emplace_back(std::monostate{});
      } else if (c.name_id) {
        auto name = name_of(stmt->i64(col));
        if (!name) return make_error(name.error());
        row.emplace_back(std::move(name).value());
      } else if (c.type == ColumnType::kReal) {
        row.emplace_back(stmt->f64(col));
      } else if (c.type == ColumnType::kText) {
        row.emplace_back(stmt->text(col));
      } else if (c.type == ColumnType::kBlob) {
        const auto bytes = stmt->blob(col);
        row.emplace_back(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
      } else {
        row.emplace_back(stmt->i64(col));
      }
    }
    rows.push_back(std::move(row));
  }
  return {};
}

Status FleetShipper::send(const Shipment& s,
                          const std::vector<std::pair<std::string, std::int64_t>>& local_marks) {
  if (auto st = fleet_->ship(options_.node, s); !st) return st;
  // Committed there: a failure here ships the same rows again, which changes nothing.
  if (auto st = set_local(local_marks); !st) return st;
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.shipments;
  stats_.rows_shipped += s.rows();
  stats_.bytes_sent = fleet_->sent_bytes();
  stats_.last_ship_unix = static_cast<double>(options_.now_ns()) / 1e9;
  if (auto clock = fleet_->clock()) {
    stats_.clock_offset_seconds = static_cast<double>(clock->offset_ns) / 1e9;
    stats_.clock_uncertainty_seconds = static_cast<double>(clock->uncertainty_ns) / 1e9;
  }
  return {};
}

Status FleetShipper::ship_tier(int tier, const char* rolled_key, const char* shipped_key, bool jobs,
                               std::int64_t chunk_ns) {
  const std::string& node = options_.node;
  auto rolled = local_meta(rolled_key + node, 0);
  if (!rolled) return std::move(rolled).take_error();
  auto shipped = local_meta(shipped_key + node, -1);
  if (!shipped) return std::move(shipped).take_error();
  const std::vector<const Table*> tables = tier_tables(jobs);
  const std::int64_t span = tier == 1 ? kMinuteNs : kHourNs;
  // The fleet store's marks for its readers (window_sql.h, tier_ranges.h).
  auto marks_to = [&](std::int64_t to) {
    std::vector<ShipMark> m;
    if (jobs) {
      m.push_back({"rolled_jobs:" + node, to});
    } else if (tier == 2) {
      m.push_back({"rolled_1h:" + node, to});
    } else {
      m.push_back({"rolled_1m:" + node, to});
      m.push_back({"written_to:" + node, to});
      m.push_back({"shipped_to:" + node, to});
    }
    return m;
  };
  std::string next_sql = "SELECT min(t) FROM (";
  for (std::size_t i = 0; i < tables.size(); ++i) {
    next_sql += fmt::format("{}SELECT min(t_ns) AS t FROM {} WHERE tier = ?1 AND node = ?2 AND t_ns >= ?3",
                            i == 0 ? "" : " UNION ALL ", tables[i]->name);
  }
  next_sql += ")";
  for (std::int64_t at = std::max<std::int64_t>(*shipped, 0); at < *rolled;) {
    auto next = local_->prepare(next_sql);
    if (!next) return make_error(next.error());
    next->bind(1, static_cast<std::int64_t>(tier));
    next->bind(2, node_id_);
    next->bind(3, at);
    auto row = next->step();
    if (!row) return make_error(row.error());
    if (!*row || next->is_null(0) || next->i64(0) >= *rolled) {
      // Nothing more before the mark: the fleet store's marks move on alone.
      Shipment s;
      s.marks = marks_to(*rolled);
      return send(s, {{shipped_key + node, *rolled}});
    }
    // From the first row's span (never earlier: rows a store had before shipping stay).
    const std::int64_t lo = floor_to(next->i64(0), span);
    const std::int64_t hi = std::min(*rolled, floor_to(lo, chunk_ns) + chunk_ns);
    Shipment s;
    s.tier = tier;
    s.from_ns = lo;
    s.to_ns = hi;
    for (const Table* t : tables) {
      ShippedRows part{t, {}};
      auto st = read_rows(
          *t, "tier = ? AND node = ? AND t_ns >= ? AND t_ns < ?",
          [&](SqliteStmt& q) {
            q.bind(1, static_cast<std::int64_t>(tier));
            q.bind(2, node_id_);
            q.bind(3, lo);
            q.bind(4, hi);
          },
          part.rows);
      if (!st) return st;
      s.tables.push_back(std::move(part));
    }
    s.marks = marks_to(hi);
    if (tier == 1 && !jobs) {
      // Where the node's totals tables begin (window_sql.h): as its own store has it.
      auto totals = local_meta("totals_from:" + node, -1);
      if (!totals) return std::move(totals).take_error();
      if (*totals >= 0) s.marks.push_back({"totals_from:" + node, *totals, true});
    }
    if (auto st = send(s, {{shipped_key + node, hi}}); !st) return st;
    at = hi;
  }
  return {};
}

Status FleetShipper::ship_processes() {
  const Table& t = tables::kProcesses;
  const std::string& node = options_.node;
  const int last_col = column_index(t, "last_ns");
  const int pid_col = column_index(t, "pid");
  const int start_col = column_index(t, "start_ns");
  // A process's row is written again with each interval that sees it, its last_ns that
  // interval's end: after the mark (last_ns, pid, start_ns) are the rows changed since.
  const std::string k_last = "shipped_processes:" + node;
  const std::string k_pid = "shipped_processes_pid:" + node;
  const std::string k_start = "shipped_processes_start:" + node;
  for (;;) {
    auto last = local_meta(k_last, 0);
    auto pid = local_meta(k_pid, 0);
    auto start = local_meta(k_start, 0);
    if (!last || !pid || !start) return make_error(!last ? last.error() : !pid ? pid.error() : start.error());
    ShippedRows part{&t, {}};
    auto st = read_rows(
        t,
        "node = ? AND (last_ns, pid, start_ns) > (?, ?, ?) ORDER BY last_ns, pid, start_ns "
        "LIMIT ?",
        [&](SqliteStmt& q) {
          q.bind(1, node_id_);
          q.bind(2, *last);
          q.bind(3, *pid);
          q.bind(4, *start);
          q.bind(5, static_cast<std::int64_t>(options_.fact_rows));
        },
        part.rows);
    if (!st) return st;
    if (part.rows.empty()) return {};
    const ShippedRow& end = part.rows.back();
    const std::vector<std::pair<std::string, std::int64_t>> marks = {
        {k_last, std::get<std::int64_t>(end[static_cast<std::size_t>(last_col)])},
        {k_pid, std::get<std::int64_t>(end[static_cast<std::size_t>(pid_col)])},
        {k_start, std::get<std::int64_t>(end[static_cast<std::size_t>(start_col)])}};
    const bool full = part.rows.size() >= options_.fact_rows;
    Shipment s;
    s.tables.push_back(std::move(part));
    if (auto sent = send(s, marks); !sent) return sent;
    if (!full) return {};
  }
}

Status FleetShipper::ship_events(const Table& t, const char* shipped_key) {
  // Events are only added: their rowids grow. A table emptied (every row past retention)
  // starts its rowids again from 1: a mark past the largest starts again too.
  const std::string key = shipped_key + options_.node;
  auto mark = local_meta(key, 0);
  if (!mark) return std::move(mark).take_error();
  auto largest = local_->scalar(fmt::format("SELECT coalesce(max(rowid), 0) FROM {}", t.name));
  if (!largest) return std::move(largest).take_error();
  std::int64_t at = *mark > *largest ? 0 : *mark;
  for (;;) {
    ShippedRows part{&t, {}};
    std::vector<std::int64_t> rowids;
    auto st = read_rows(
        t, "node = ? AND rowid > ? ORDER BY rowid LIMIT ?",
        [&](SqliteStmt& q) {
          q.bind(1, node_id_);
          q.bind(2, at);
          q.bind(3, static_cast<std::int64_t>(options_.fact_rows));
        },
        part.rows, "rowid", &rowids);
    if (!st) return st;
    if (rowids.empty()) return {};
    at = rowids.back();
    const bool full = rowids.size() >= options_.fact_rows;
    Shipment s;
    s.tables.push_back(std::move(part));
    if (auto sent = send(s, {{key, at}}); !sent) return sent;
    if (!full) return {};
  }
}

Status FleetShipper::ship_once() {
  auto round = [this]() -> Status {
    if (auto st = open(); !st) return st;
    if (node_id_ < 0) {
      auto stmt = local_->prepare("SELECT id FROM names WHERE name = ?");
      if (!stmt) return make_error(stmt.error());
      stmt->bind(1, std::string_view(options_.node));
      auto row = stmt->step();
      if (!row) return make_error(row.error());
      if (!*row) return {};  // nothing written yet
      node_id_ = stmt->i64(0);
    }
    if (auto st = ship_tier(1, "rolled_1m:", "shipped_1m:", false, options_.minute_chunk_ns); !st) return st;
    if (auto st = ship_tier(2, "rolled_1h:", "shipped_1h:", false, options_.hour_chunk_ns); !st) return st;
    if (auto st = ship_tier(2, "rolled_jobs:", "shipped_jobs:", true, options_.hour_chunk_ns); !st) return st;
    if (auto st = ship_processes(); !st) return st;
    if (auto st = ship_events(tables::kAnomalies, "shipped_anomalies:"); !st) return st;
    if (auto st = ship_events(tables::kLeaks, "shipped_leaks:"); !st) return st;
    return fleet_->age_out(options_.node, options_.now_ns(), options_.retention);
  };
  Status st = round();
  std::optional<double> behind;
  if (local_) {
    auto rolled = local_meta("rolled_1m:" + options_.node, 0);
    auto shipped = local_meta("shipped_1m:" + options_.node, 0);
    if (rolled && shipped && *shipped > 0)
      behind = static_cast<double>(std::max<std::int64_t>(*rolled - *shipped, 0)) / 1e9;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.up = static_cast<bool>(st);
  if (!st) ++stats_.failures;
  if (fleet_) stats_.bytes_sent = fleet_->sent_bytes();
  if (behind) stats_.behind_seconds = *behind;
  return st;
}

}  // namespace eacgm::history
