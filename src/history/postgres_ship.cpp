// The fleet store's side of shipping (history/fleet_shipper.h): a node's rolled rows and
// facts, read from its own store, written in one transaction per shipment with the
// node's clock against the server's.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>
#include <variant>
#include <vector>

#include "history/job_functions_rollup.h"
#include "history/namespace_rollup.h"
#include "history/pg_rows.h"
#include "history/postgres_store.h"
#include "history/schema_sql.h"

namespace eacgm::history {
namespace {

constexpr std::int64_t kHourNs = 3'600'000'000'000;

// One shipped value, as column `c` takes it.
template <class Out>
void put_value(Out& out, const Column& c, const ShippedValue& v) {
  if (std::holds_alternative<std::monostate>(v)) {
    out.null();
  } else if (const auto* i = std::get_if<std::int64_t>(&v)) {
    out.integer(*i);
  } else if (const auto* d = std::get_if<double>(&v)) {
    out.real(*d);
  } else if (c.name_id) {
    out.name(std::get<std::string>(v));
  } else if (c.type == ColumnType::kBlob) {
    out.blob(std::get<std::string>(v));
  } else {
    out.text(std::get<std::string>(v));
  }
}

template <class Out>
void put_shipped(Out& out, const Table& t, const ShippedRow& row) {
  for (std::size_t i = 0; i < t.columns.size(); ++i) put_value(out, t.columns[i], row.at(i));
}

// An event's row unless the same row is there: every column alike.
std::string insert_new_sql(const Table& t) {
  std::string same;
  int n = 0;
  for (const Column& c : t.columns) {
    same += fmt::format("{}{} {} ${}", same.empty() ? "" : " AND ", c.name,
                        c.not_null ? "=" : "IS NOT DISTINCT FROM", ++n);
  }
  return fmt::format("INSERT INTO {0}({1}) SELECT {2} WHERE NOT EXISTS (SELECT 1 FROM {0} WHERE {3})", t.name,
                     column_list(t), values_list(Dialect::kPostgres, t), same);
}

}  // namespace

Status PostgresStore::ship(const std::string& node, const Shipment& s) {
  if (auto st = ready(); !st) return st;
  if (auto st = sample_clock(); !st) return st;
  std::set<std::string> wanted{node};
  for (const ShippedRows& part : s.tables) {
    for (const ShippedRow& row : part.rows) {
      if (row.size() != part.table->columns.size())
        return make_error(fmt::format("shipped rows of {}: a row of {} values for {} columns",
                                      part.table->name, row.size(), part.table->columns.size()));
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (part.table->columns[i].name_id && std::holds_alternative<std::string>(row[i]))
          wanted.insert(std::get<std::string>(row[i]));
      }
    }
  }
  if (auto st = resolve(wanted); !st) return st;
  const std::int32_t node_id = id_of(node);
  // The days of the shipped interval rows have their tables (t_ns is their third column).
  std::int64_t lo = 0, hi = 0;
  bool any = false;
  for (const ShippedRows& part : s.tables) {
    if (!part.table->tiered()) continue;
    for (const ShippedRow& row : part.rows) {
      const auto* t = std::get_if<std::int64_t>(&row.at(2));
      if (t == nullptr)
        return make_error(fmt::format("shipped rows of {}: a row without t_ns", part.table->name));
      lo = any ? std::min(lo, *t) : *t;
      hi = any ? std::max(hi, *t + 1) : *t + 1;
      any = true;
    }
  }
  if (any) {
    if (auto st = make_days(s.tier, lo, hi); !st) return st;
  }
  std::vector<std::int64_t> renamed_hours;
  // The hours whose calls per job are made again (job_functions_rollup.h): a shipment's
  // hour rows of functions, and those of processes whose job came after them.
  std::vector<std::pair<std::int64_t, std::int64_t>> job_ranges;
  for (const ShippedRows& part : s.tables) {
    if (s.tier == 2 && part.table == &tables::kFunctions) job_ranges.emplace_back(s.from_ns, s.to_ns);
  }
  auto st = in_transaction([&]() -> Status {
    if (auto st = record_clock(node_id); !st) return st;
    for (const ShippedRows& part : s.tables) {
      const Table& t = *part.table;
      if (t.tiered()) {
        if (auto st = conn_.exec(
                fmt::format("DELETE FROM {} WHERE tier = $1 AND node = $2 AND t_ns >= $3 AND t_ns < $4",
                            t.name),
                PgParams().i32(s.tier).i32(node_id).i64(s.from_ns).i64(s.to_ns));
            !st) {
          return st;
        }
        if (part.rows.empty()) continue;
        PgCopy copy;
        for (const ShippedRow& row : part.rows) {
          PgCopyOut out(copy, t, names_);
          put_shipped(out, t, row);
        }
        if (auto st = conn_.copy_in(copy_sql(t), copy.finish()); !st) return st;
        continue;
      }
      if (part.rows.empty()) continue;
      if (!t.key.empty()) {
        // Every row by COPY into a table of this session, then one upsert from it that
        // combines each with the row there as a write's does.
        const std::string staged = fmt::format("shipped_{}", t.name);
        // Made once a session; its notice that it is there is not worth a line.
        if (auto st =
                conn_.script(fmt::format("SET LOCAL client_min_messages = warning; CREATE TEMP TABLE IF "
                                         "NOT EXISTS {} (LIKE {}) ON COMMIT DELETE ROWS",
                                         staged, t.name));
            !st) {
          return st;
        }
        PgCopy copy;
        for (const ShippedRow& row : part.rows) {
          PgCopyOut out(copy, t, names_);
          put_shipped(out, t, row);
        }
        if (auto st = conn_.copy_in(
                fmt::format("COPY {}({}) FROM STDIN (FORMAT binary)", staged, column_list(t)), copy.finish());
            !st) {
          return st;
        }
        std::string upsert = insert_row(Dialect::kPostgres, t);
        const std::string values = fmt::format("VALUES({})", values_list(Dialect::kPostgres, t));
        const auto at = upsert.find(values);
        if (at == std::string::npos)
          return make_error(fmt::format("shipping {}: no VALUES in its insert", t.name));
        upsert.replace(at, values.size(), fmt::format("SELECT {} FROM {}", column_list(t), staged));
        if (&t == &tables::kProcesses) {
          // Hours already in the job rollups of processes whose namespace, job or pod
          // this shipment tells first (a node catching up ships an hour's job rollups
          // before its processes): their namespace rows are made again below.
          auto late = conn_.query(
              "SELECT DISTINCT j.t_ns FROM shipped_processes s JOIN job_gpus j ON j.tier = 2 AND j.node = "
              "s.node AND j.pid = s.pid AND j.start_ns = s.start_ns WHERE s.namespace <> '' AND NOT EXISTS "
              "(SELECT 1 FROM processes p WHERE p.node = s.node AND p.pid = s.pid AND p.start_ns = "
              "s.start_ns "
              "AND p.namespace = s.namespace AND p.job = s.job AND p.pod = s.pod)");
          if (!late) return std::move(late).take_error();
          for (int i = 0; i < late->rows(); ++i) renamed_hours.push_back(late->i64(i, 0));
          // Likewise the hours of functions of processes whose job this shipment tells
          // first: their calls per job are made again below.
          auto jobs_late = conn_.query(fmt::format(
              "SELECT DISTINCT h FROM shipped_processes s, generate_series(s.first_ns - s.first_ns % {0}, "
              "s.last_ns, {0}) h WHERE s.job <> '' AND NOT EXISTS (SELECT 1 FROM processes p WHERE p.node = "
              "s.node AND p.pid = s.pid AND p.start_ns = s.start_ns AND p.job = s.job) AND EXISTS (SELECT 1 "
              "FROM functions f WHERE f.tier = 2 AND f.node = s.node AND f.t_ns = h AND f.pid = s.pid AND "
              "f.start_ns = s.start_ns)",
              kHourNs));
          if (!jobs_late) return std::move(jobs_late).take_error();
          for (int i = 0; i < jobs_late->rows(); ++i) {
            const std::int64_t h = jobs_late->i64(i, 0);
            job_ranges.emplace_back(h, h + 1);
          }
        }
        if (auto st = conn_.exec(upsert); !st) return st;
        continue;
      }
      const std::string sql = insert_new_sql(t);
      for (const ShippedRow& row : part.rows) {
        PgParams params;
        PgParamsOut out(params, t, names_);
        put_shipped(out, t, row);
        if (auto st = conn_.exec(sql, params); !st) return st;
      }
    }
    // The namespace rollup of the job rollups' hours shipped (namespace_rollup.h), and
    // of those whose processes came after them.
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
    for (const ShippedRows& part : s.tables) {
      if (part.table == &tables::kJobGpus) ranges.emplace_back(s.from_ns, s.to_ns);
    }
    for (std::int64_t hour : renamed_hours) ranges.emplace_back(hour, hour + 1);
    for (const auto& [from, to] : ranges) {
      const PgParams range = PgParams().i32(node_id).i64(from).i64(to);
      if (auto st = conn_.exec(namespace_delete_sql(), range); !st) return st;
      if (auto st = conn_.exec(namespace_roll_node_sql(), range); !st) return st;
    }
    for (const auto& [from, to] : job_ranges) {
      const PgParams range = PgParams().i32(node_id).i64(from).i64(to);
      if (auto st = conn_.exec(job_functions_delete_sql(), range); !st) return st;
      if (auto st = conn_.exec(job_functions_roll_node_sql(), range); !st) return st;
    }
    for (const ShipMark& m : s.marks) {
      const char* conflict =
          m.keep_first ? "NOTHING" : "UPDATE SET value = GREATEST(meta.value, excluded.value)";
      if (auto st = conn_.exec(
              fmt::format("INSERT INTO meta(key, value) VALUES($1, $2) ON CONFLICT(key) DO {}", conflict),
              PgParams().text(m.key).i64(m.value));
          !st) {
        return st;
      }
    }
    return {};
  });
  if (!st) days_made_.clear();
  return st;
}

Status PostgresStore::age_out(const std::string& node, std::int64_t now_ns, const Retention& retention) {
  if (auto st = ready(); !st) return st;
  if (auto st = resolve({node}); !st) return st;
  if (auto st = make_days_ahead(now_ns); !st) return st;
  return apply_retention(id_of(node), now_ns, retention);
}

}  // namespace eacgm::history
