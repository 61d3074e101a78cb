// The PostgreSQL history's writes: one transaction per batch, rows by COPY.
#include <fmt/format.h>

#include <map>
#include <tuple>

#include "history/interval_totals.h"
#include "history/pg_rows.h"
#include "history/postgres_store.h"
#include "history/schema_sql.h"

namespace eacgm::history {

Status PostgresStore::write(const std::string& node, const IntervalBatch& b) {
  if (auto st = ready(); !st) return st;
  if (auto st = sample_clock(); !st) return st;
  NameCollector wanted;
  wanted.names.insert(node);
  for_each_table(b, [&wanted](const Table&, const auto& rows) {
    for (const auto& row : rows) put_row(wanted, RowPlace{}, row);
  });
  if (auto st = resolve(wanted.names); !st) return st;
  const std::int32_t node_id = id_of(node);
  // The interval's day has its tables (a node back after an outage may write one older
  // than any there).
  if (auto st = make_days(0, b.t_ns, b.t_ns + 1); !st) return st;
  auto st = in_transaction([&]() -> Status {
    if (auto st = record_clock(node_id); !st) return st;
    PgParams interval;
    PgParamsOut out(interval, tables::kIntervals, names_);
    put_row(out, RowPlace{0, node_id, b.t_ns, b.span_ns}, b);
    auto fresh = conn_.query(
        fmt::format("INSERT INTO intervals({}) VALUES({}) ON CONFLICT(node, t_ns) DO NOTHING "
                    "RETURNING 1",
                    column_list(tables::kIntervals), values_list(Dialect::kPostgres, tables::kIntervals)),
        interval);
    if (!fresh) return std::move(fresh).take_error();
    bool merge = false;
    if (fresh->rows() == 0) {
      auto span = conn_.query("SELECT span_ns FROM intervals WHERE node = $1 AND t_ns = $2 FOR UPDATE",
                              PgParams().i32(node_id).i64(b.t_ns));
      if (!span) return std::move(span).take_error();
      // The same interval again: a retry of a batch whose commit went through.
      if (span->rows() > 0 && span->i64(0, 0) == b.span_ns) return {};
      // Another interval starting at the same instant: its rows add to the first's.
      if (auto st = conn_.exec("UPDATE intervals SET span_ns = $3, mode = $4 WHERE node = $1 AND t_ns = $2",
                               interval);
          !st) {
        return st;
      }
      merge = true;
    }
    if (auto st = write_rows(node_id, b, merge); !st) return st;
    if (!totals_marked_.contains(node)) {
      if (auto st = exec(mark_totals_sql(Dialect::kPostgres, node, b.t_ns)); !st) return st;
    }
    // The end of what this node has written: minutes and hours before it are complete.
    return conn_.exec(
        "INSERT INTO meta(key, value) VALUES($1, $2) ON CONFLICT(key) DO UPDATE SET value = "
        "GREATEST(meta.value, excluded.value)",
        PgParams().text("written_to:" + node).i64(b.t_ns + b.span_ns));
  });
  if (st) {
    totals_marked_.insert(node);
  } else {
    // A day table dropped since it was made here (retention) is made again next time.
    days_made_.clear();
  }
  return st;
}

namespace {

// A kernel's launches under its name's id (schema_rows.h's kernel_fields).
struct KernelById {
  std::int32_t kernel = 0;
  std::uint64_t launches = 0;
};

// Each row of a batch once: rows of one key add up (kernels, functions) or the last
// one stands (GPUs), as the SQLite store's conflict clauses have it.
struct BatchRows {
  std::map<FunctionKey, FunctionSums> functions;
  std::map<std::int32_t, KernelById> kernels;
  std::map<std::uint32_t, const GpuRecord*> gpus;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::int64_t>, const GpuProcessRecord*> gpu_processes;
};

// COPY of `rows` into `t`, each written by `put(out, row)`.
template <class Rows, class Put>
Status copy_into(PgConn& conn, const Table& t, const NameIds& ids, const Rows& rows, Put&& put) {
  if (rows.empty()) return {};
  PgCopy copy;
  for (const auto& row : rows) {
    PgCopyOut out(copy, t, ids);
    put(out, row);
  }
  return conn.copy_in(copy_sql(t), copy.finish());
}

}  // namespace

Status PostgresStore::write_rows(std::int32_t node, const IntervalBatch& b, bool merge_existing) {
  BatchRows rows;
  for (const auto& f : b.functions) {
    const FunctionKey key{static_cast<std::int32_t>(f.process.pid), f.process.start_ns, id_of(f.domain),
                          id_of(f.function)};
    rows.functions[key].add(FunctionSums::of(f));
  }
  for (const auto& k : b.kernels) {
    KernelById& row = rows.kernels[id_of(k.kernel)];
    row.kernel = id_of(k.kernel);
    row.launches += k.launches;
  }
  for (const auto& g : b.gpus) rows.gpus[g.index] = &g;
  for (const auto& g : b.gpu_processes) rows.gpu_processes[{g.gpu, g.process.pid, g.process.start_ns}] = &g;
  const PgParams here = PgParams().i32(node).i64(b.t_ns);
  if (merge_existing) {
    // The totals are made again below from every row of the interval.
    for (const char* table : {"process_totals", "function_totals"}) {
      if (auto st = conn_.exec(
              fmt::format("DELETE FROM {} WHERE tier = 0 AND node = $1 AND t_ns = $2", table), here);
          !st) {
        return st;
      }
    }
    auto old = conn_.query(fmt::format("DELETE FROM functions WHERE tier = 0 AND node = $1 AND t_ns = $2 "
                                       "RETURNING pid, start_ns, domain, function, {}",
                                       column_list(tables::kFunctions, "calls")),
                           here);
    if (!old) return std::move(old).take_error();
    for (int i = 0; i < old->rows(); ++i) {
      const FunctionKey key{static_cast<std::int32_t>(old->i64(i, 0)), old->i64(i, 1),
                            static_cast<std::int32_t>(old->i64(i, 2)),
                            static_cast<std::int32_t>(old->i64(i, 3))};
      rows.functions[key].add(read_sums(*old, i, 4));
    }
    auto old_kernels = conn_.query(
        "DELETE FROM kernels WHERE tier = 0 AND node = $1 AND t_ns = $2 RETURNING kernel, launches", here);
    if (!old_kernels) return std::move(old_kernels).take_error();
    for (int i = 0; i < old_kernels->rows(); ++i) {
      KernelById& row = rows.kernels[static_cast<std::int32_t>(old_kernels->i64(i, 0))];
      row.kernel = static_cast<std::int32_t>(old_kernels->i64(i, 0));
      row.launches += static_cast<std::uint64_t>(old_kernels->i64(i, 1));
    }
    for (const char* table : {"gpus", "gpu_processes"}) {
      if (auto st = conn_.exec(
              fmt::format("DELETE FROM {} WHERE tier = 0 AND node = $1 AND t_ns = $2", table), here);
          !st) {
        return st;
      }
    }
  }
  const RowPlace at{0, node, b.t_ns, b.span_ns};
  if (!b.processes.empty()) {
    const std::string upsert = insert_row(Dialect::kPostgres, tables::kProcesses);
    for (const auto& p : b.processes) {
      PgParams params;
      PgParamsOut out(params, tables::kProcesses, names_);
      put_row(out, at, p);
      if (auto st = conn_.exec(upsert, params); !st) return st;
    }
  }
  auto put = [&at](auto& out, const auto& row) { put_row(out, at, row); };
  auto put_second = [&at](auto& out, const auto& kv) {
    if constexpr (std::is_pointer_v<std::decay_t<decltype(kv.second)>>) {
      put_row(out, at, *kv.second);
    } else {
      put_kernel(out, at, kv.second);
    }
  };
  TotalsBuilder<std::int32_t> totals;
  const auto gpu_time = names_.find(kGpuTimeDomain);
  for (const auto& [key, sums] : rows.functions) {
    totals.add({static_cast<std::uint32_t>(key.pid), key.start_ns}, key.domain, key.function,
               gpu_time != names_.end() && key.domain == gpu_time->second, sums);
  }
  const IntervalTotals<std::int32_t> sums = totals.take();
  Status st = copy_into(conn_, tables::kFunctions, names_, rows.functions,
                        [&at](auto& out, const auto& kv) { put_row(out, at, kv.first, kv.second); });
  if (st) st = copy_into(conn_, tables::kProcessTotals, names_, sums.processes, put);
  if (st) st = copy_into(conn_, tables::kFunctionTotals, names_, sums.functions, put);
  if (st) st = copy_into(conn_, tables::kKernels, names_, rows.kernels, put_second);
  if (st) st = copy_into(conn_, tables::kGpus, names_, rows.gpus, put_second);
  if (st) st = copy_into(conn_, tables::kGpuProcesses, names_, rows.gpu_processes, put_second);
  if (st) st = copy_into(conn_, tables::kAnomalies, names_, b.anomalies, put);
  if (st) st = copy_into(conn_, tables::kLeaks, names_, b.leaks, put);
  return st;
}

}  // namespace eacgm::history
