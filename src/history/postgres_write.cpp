// The PostgreSQL history's writes: one transaction per batch, rows by COPY.
#include <fmt/format.h>

#include <map>
#include <tuple>

#include "history/pg_copy.h"
#include "history/pg_function_rows.h"
#include "history/postgres_store.h"
#include "history/process_columns.h"

namespace eacgm::history {

Status PostgresStore::write(const std::string& node, const IntervalBatch& b) {
  if (auto st = ready(); !st) return st;
  if (auto st = sample_clock(); !st) return st;
  std::set<std::string> wanted{node};
  for (const auto& f : b.functions) wanted.insert({f.domain, f.function});
  for (const auto& k : b.kernels) wanted.insert(k.kernel);
  for (const auto& g : b.gpus) wanted.insert({g.uuid, g.name});
  for (const auto& a : b.anomalies) wanted.insert({a.domain, a.function});
  if (auto st = resolve(wanted); !st) return st;
  const std::int32_t node_id = id_of(node);
  return in_transaction([&]() -> Status {
    if (auto st = record_clock(node_id); !st) return st;
    auto fresh = conn_.query(
        "INSERT INTO intervals(node, t_ns, span_ns, mode) VALUES($1, $2, $3, $4) ON CONFLICT(node, t_ns) DO "
        "NOTHING "
        "RETURNING 1",
        PgParams().i32(node_id).i64(b.t_ns).i64(b.span_ns).text(b.mode));
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
                               PgParams().i32(node_id).i64(b.t_ns).i64(b.span_ns).text(b.mode));
          !st) {
        return st;
      }
      merge = true;
    }
    if (auto st = write_rows(node_id, b, merge); !st) return st;
    // The end of what this node has written: minutes and hours before it are complete.
    return conn_.exec(
        "INSERT INTO meta(key, value) VALUES($1, $2) ON CONFLICT(key) DO UPDATE SET value = "
        "GREATEST(meta.value, excluded.value)",
        PgParams().text("written_to:" + node).i64(b.t_ns + b.span_ns));
  });
}

namespace {

// Each row of a batch once: rows of one key add up (kernels, functions) or the last
// one stands (GPUs), as the SQLite store's conflict clauses have it.
struct BatchRows {
  std::map<FunctionKey, FunctionSums> functions;
  std::map<std::int32_t, std::uint64_t> kernels;
  std::map<std::uint32_t, const GpuRecord*> gpus;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::int64_t>, const GpuProcessRecord*> gpu_processes;
};

// A process's row, written again each interval it is seen: its span grows, its facts
// stay once known.
std::string process_upsert() {
  std::string columns = "node, pid, start_ns, rank, local_rank, world_size, first_ns, last_ns, exited";
  std::string values = "$1, $2, $3, $4, $5, $6, $7, $8, $9";
  std::string update =
      "rank = coalesce(excluded.rank, processes.rank), local_rank = coalesce(excluded.local_rank, "
      "processes.local_rank), world_size = coalesce(excluded.world_size, processes.world_size), "
      "first_ns = LEAST(processes.first_ns, excluded.first_ns), last_ns = GREATEST(processes.last_ns, "
      "excluded.last_ns), exited = GREATEST(processes.exited, excluded.exited)";
  int n = 9;
  for (const auto& c : kProcessTextColumns) {
    columns += fmt::format(", {}", c.column);
    values += fmt::format(", ${}", ++n);
    update += fmt::format(", {0} = CASE WHEN excluded.{0} <> '' THEN excluded.{0} ELSE processes.{0} END",
                          c.column);
  }
  return fmt::format("INSERT INTO processes({}) VALUES({}) ON CONFLICT(node, pid, start_ns) DO UPDATE SET {}",
                     columns, values, update);
}

}  // namespace

Status PostgresStore::write_rows(std::int32_t node, const IntervalBatch& b, bool merge_existing) {
  BatchRows rows;
  for (const auto& f : b.functions) {
    const FunctionKey key{static_cast<std::int32_t>(f.process.pid), f.process.start_ns, id_of(f.domain),
                          id_of(f.function)};
    rows.functions[key].add(FunctionSums::of(f));
  }
  for (const auto& k : b.kernels) rows.kernels[id_of(k.kernel)] += k.launches;
  for (const auto& g : b.gpus) rows.gpus[g.index] = &g;
  for (const auto& g : b.gpu_processes) rows.gpu_processes[{g.gpu, g.process.pid, g.process.start_ns}] = &g;
  const PgParams here = PgParams().i32(node).i64(b.t_ns);
  if (merge_existing) {
    auto old =
        conn_.query(fmt::format("DELETE FROM functions WHERE tier = 0 AND node = $1 AND t_ns = $2 RETURNING "
                                "pid, start_ns, domain, function, {}",
                                kSumColumns),
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
      rows.kernels[static_cast<std::int32_t>(old_kernels->i64(i, 0))] +=
          static_cast<std::uint64_t>(old_kernels->i64(i, 1));
    }
    for (const char* table : {"gpus", "gpu_processes"}) {
      if (auto st = conn_.exec(
              fmt::format("DELETE FROM {} WHERE tier = 0 AND node = $1 AND t_ns = $2", table), here);
          !st) {
        return st;
      }
    }
  }
  if (!b.processes.empty()) {
    const std::string upsert = process_upsert();
    for (const auto& p : b.processes) {
      PgParams params;
      params.i32(node)
          .i32(static_cast<std::int32_t>(p.key.pid))
          .i64(p.key.start_ns)
          .opt(p.rank)
          .opt(p.local_rank)
          .opt(p.world_size)
          .i64(p.first_ns)
          .i64(p.last_ns)
          .i32(p.exited ? 1 : 0);
      for (const auto& c : kProcessTextColumns) params.text(p.*c.field);
      if (auto st = conn_.exec(upsert, params); !st) return st;
    }
  }
  const auto t = b.t_ns;
  const auto span = b.span_ns;
  if (!rows.functions.empty()) {
    PgCopy copy;
    for (const auto& [key, sums] : rows.functions) copy_function(copy, 0, node, t, span, key, sums);
    if (auto st = conn_.copy_in(kCopyFunctions, copy.finish()); !st) return st;
  }
  if (!rows.kernels.empty()) {
    PgCopy copy;
    for (const auto& [kernel, launches] : rows.kernels) {
      copy.row(6).i16(0).i32(node).i64(t).i64(span).i32(kernel).i64(static_cast<std::int64_t>(launches));
    }
    if (auto st = conn_.copy_in(
            "COPY kernels(tier,node,t_ns,span_ns,kernel,launches) FROM STDIN (FORMAT binary)", copy.finish());
        !st) {
      return st;
    }
  }
  auto opt_i64 = [](const auto& v) {
    return v ? std::optional<std::int64_t>(static_cast<std::int64_t>(*v)) : std::nullopt;
  };
  if (!rows.gpus.empty()) {
    PgCopy copy;
    for (const auto& [index, g] : rows.gpus) {
      copy.row(16)
          .i16(0)
          .i32(node)
          .i64(t)
          .i64(span)
          .i32(static_cast<std::int32_t>(index))
          .i32(id_of(g->uuid))
          .i32(id_of(g->name))
          .i64(static_cast<std::int64_t>(g->samples))
          .opt_f64(g->util_mean)
          .opt_i64(opt_i64(g->util_max))
          .opt_f64(g->memory_used_mean)
          .opt_i64(opt_i64(g->memory_used_max))
          .opt_i64(opt_i64(g->memory_total))
          .opt_f64(g->power_mean_w)
          .opt_f64(g->power_max_w)
          .opt_i64(opt_i64(g->temperature_max));
    }
    if (auto st = conn_.copy_in(
            "COPY gpus(tier,node,t_ns,span_ns,gpu,uuid,name,samples,util_mean,util_max,memory_used_mean,"
            "memory_used_max,memory_total,power_mean_w,power_max_w,temperature_max) FROM STDIN (FORMAT "
            "binary)",
            copy.finish());
        !st) {
      return st;
    }
  }
  if (!rows.gpu_processes.empty()) {
    PgCopy copy;
    for (const auto& [key, g] : rows.gpu_processes) {
      copy.row(10)
          .i16(0)
          .i32(node)
          .i64(t)
          .i64(span)
          .i32(static_cast<std::int32_t>(g->gpu))
          .i32(static_cast<std::int32_t>(g->process.pid))
          .i64(g->process.start_ns)
          .i64(static_cast<std::int64_t>(g->samples))
          .opt_i64(opt_i64(g->memory_max))
          .opt_f64(g->sm_mean);
    }
    if (auto st = conn_.copy_in(
            "COPY gpu_processes(tier,node,t_ns,span_ns,gpu,pid,start_ns,samples,memory_max,sm_mean) FROM "
            "STDIN "
            "(FORMAT binary)",
            copy.finish());
        !st) {
      return st;
    }
  }
  if (!b.anomalies.empty()) {
    PgCopy copy;
    for (const auto& a : b.anomalies) {
      copy.row(11)
          .i32(node)
          .i64(a.t_ns)
          .i64(a.end_ns)
          .i32(static_cast<std::int32_t>(a.process.pid))
          .i64(a.process.start_ns)
          .text(a.kind)
          .i32(id_of(a.domain))
          .i32(id_of(a.function))
          .f64(a.score)
          .f64(a.value)
          .f64(a.median_ns);
    }
    if (auto st = conn_.copy_in(
            "COPY anomalies(node,t_ns,end_ns,pid,start_ns,kind,domain,function,score,value,median_ns) FROM "
            "STDIN "
            "(FORMAT binary)",
            copy.finish());
        !st) {
      return st;
    }
  }
  if (!b.leaks.empty()) {
    PgCopy copy;
    for (const auto& l : b.leaks) {
      copy.row(7)
          .i32(node)
          .i64(t + span)
          .i32(static_cast<std::int32_t>(l.process.pid))
          .i64(l.process.start_ns)
          .i32(l.device)
          .i64(static_cast<std::int64_t>(l.allocations))
          .i64(static_cast<std::int64_t>(l.bytes));
    }
    if (auto st = conn_.copy_in(
            "COPY leaks(node,t_ns,pid,start_ns,device,allocations,bytes) FROM STDIN (FORMAT binary)",
            copy.finish());
        !st) {
      return st;
    }
  }
  return {};
}

}  // namespace eacgm::history
