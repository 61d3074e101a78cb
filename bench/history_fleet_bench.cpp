// A fleet's history in one PostgreSQL database, simulated with the real writer code
// (PostgresStore) and a compressed clock: N nodes, each a thread with its own
// connection, write back to back the intervals of a busy 8-GPU node (16 training
// processes with 40 active functions each, 400 kernels, 8 GPUs, as
// bench/history_bench.cpp makes them), with the minute maintenance every 6 intervals.
// Prints the rows per second the server sustains (and so how many real nodes, each
// writing an interval every 10 s, it keeps up with), the bytes per node-day, and the
// p50/p95 of the history's queries over the written data.
//   build/bench/eacgm_bench_history_fleet --url URL [--nodes 8] [--hours 1] [--sweep 1,2,4]
//   [--repeat 10]
// bench/history_fleet.sh starts a throwaway server and runs it.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "busy_node.h"
#include "history/pg_conn.h"
#include "history/postgres_store.h"
#include "history/schema.h"

namespace {

using namespace eacgm::history;
using Clock = std::chrono::steady_clock;
constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kT0 = 1'793'491'200 * kS;  // an hour boundary

using bench::Shapes;

Shapes make_shapes() {
  Shapes s;
  s.sketches = bench::lognormal_sketches(64, 50, 10);
  for (int f = 0; f < 40; ++f) s.functions.push_back("cudaFunction" + std::to_string(f));
  for (int k = 0; k < 400; ++k) {
    s.kernels.push_back(
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::"
        "BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > > >(int, "
        "T3)::{lambda(int)#" +
        std::to_string(k) + "}>");
  }
  return s;
}

// Interval `i` of a node: bench/history_bench.cpp's shape.
IntervalBatch interval(const Shapes& s, std::int64_t i) {
  IntervalBatch b;
  b.t_ns = kT0 + kS * 10 * i;
  b.span_ns = 10 * kS;
  b.mode = "always-on";
  for (std::uint32_t p = 0; p < 16; ++p) {
    const ProcessKey key{1000 + p, kT0 - kS};
    if (i % 60 == 0) {
      ProcessRecord r;
      r.key = key;
      r.comm = "python3";
      r.cmdline = "python3 train.py --rank " + std::to_string(p % 8);
      r.rank = p % 8;
      r.world_size = 8;
      r.first_ns = kT0;
      r.last_ns = b.t_ns + b.span_ns;
      b.processes.push_back(r);
    }
    for (std::size_t f = 0; f < s.functions.size(); ++f) {
      FunctionRecord fr;
      fr.process = key;
      fr.domain = f < 30 ? "cuda" : "nccl";
      fr.function = s.functions[f];
      fr.latency = s.sketches[(f + p + static_cast<std::size_t>(i)) % s.sketches.size()];
      fr.calls = fr.timed = fr.latency.count;
      fr.bytes = f % 3 == 0 ? fr.calls * 65536 : 0;
      b.functions.push_back(std::move(fr));
    }
    b.gpu_processes.push_back({p % 8, key, 10, 40ULL << 30, 80, 0, 4000.0, 4000.0});
  }
  for (const auto& k : s.kernels) b.kernels.push_back({k, 1000});
  bench::add_busy_gpus(b);
  return b;
}

std::size_t rows_of(const IntervalBatch& b) {
  return b.processes.size() + b.functions.size() + b.kernels.size() + b.gpus.size() + b.gpu_processes.size();
}

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

struct WriteRun {
  double seconds = 0;
  std::uint64_t rows = 0, batches = 0;
  std::vector<double> write_ms, maintain_ms;
  int failures = 0;
};

// `nodes` threads write `intervals` intervals each.
WriteRun write_fleet(const std::string& url, const Shapes& shapes, int nodes, std::int64_t intervals) {
  WriteRun run;
  std::vector<WriteRun> per(static_cast<std::size_t>(nodes));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<std::size_t>(nodes));
  const auto start = Clock::now();
  for (int n = 0; n < nodes; ++n) {
    threads.emplace_back([&, n] {
      WriteRun& mine = per[static_cast<std::size_t>(n)];
      auto store = PostgresStore::open(url);
      if (!store) {
        std::fprintf(stderr, "%s\n", store.error().c_str());
        ++mine.failures;
        return;
      }
      const std::string node = "gpu-node-" + std::to_string(n);
      for (std::int64_t i = 0; i < intervals; ++i) {
        const IntervalBatch b = interval(shapes, i);
        auto t0 = Clock::now();
        if (auto st = (*store)->write(node, b); !st) {
          std::fprintf(stderr, "write: %s\n", st.error().c_str());
          ++mine.failures;
          continue;
        }
        mine.write_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        mine.rows += rows_of(b);
        ++mine.batches;
        if ((i + 1) % 6 == 0) {
          t0 = Clock::now();
          Retention r;
          r.max_bytes = 0;
          if (auto st = (*store)->maintain(node, b.t_ns + b.span_ns, r); !st) {
            std::fprintf(stderr, "maintain: %s\n", st.error().c_str());
            ++mine.failures;
          }
          mine.maintain_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& p : per) {
    run.rows += p.rows;
    run.batches += p.batches;
    run.failures += p.failures;
    run.write_ms.insert(run.write_ms.end(), p.write_ms.begin(), p.write_ms.end());
    run.maintain_ms.insert(run.maintain_ms.end(), p.maintain_ms.begin(), p.maintain_ms.end());
  }
  return run;
}

bool reset_database(const std::string& url) {
  auto conn = PgConn::connect(url);
  if (!conn) {
    std::fprintf(stderr, "%s\n", conn.error().c_str());
    return false;
  }
  std::string sql;
  for (const Table* t : tables::kAll) sql += "DROP TABLE IF EXISTS " + std::string(t->name) + ";";
  return static_cast<bool>(conn->script(sql));
}

void print_write(const char* label, int nodes, const WriteRun& w) {
  const double rows_s = static_cast<double>(w.rows) / w.seconds;
  const double batches_s = static_cast<double>(w.batches) / w.seconds;
  const std::string failed = w.failures > 0 ? " " + std::to_string(w.failures) + " failures" : "";
  std::printf("| %s | %d | %.0f | %.1f | %.0f | %.1f / %.1f | %.1f / %.1f |%s\n", label, nodes, rows_s,
              batches_s, batches_s * 10, pct(w.write_ms, 0.5), pct(w.write_ms, 0.95), pct(w.maintain_ms, 0.5),
              pct(w.maintain_ms, 0.95), failed.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string url;
  int nodes = 8;
  double hours = 1;
  int repeat = 10;
  std::vector<int> sweep;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const char* v = argv[i + 1];
    if (a == "--url") url = v;
    if (a == "--nodes") nodes = std::atoi(v);
    if (a == "--hours") hours = std::atof(v);
    if (a == "--repeat") repeat = std::atoi(v);
    if (a == "--sweep") {
      for (const char* p = v; *p != '\0';) {
        sweep.push_back(std::atoi(p));
        while (*p != '\0' && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    }
  }
  if (url.empty()) {
    std::fprintf(stderr, "usage: %s --url URL [--nodes N] [--hours H] [--sweep 1,2,4] [--repeat K]\n",
                 argv[0]);
    return 2;
  }
  const Shapes shapes = make_shapes();
  const auto intervals = static_cast<std::int64_t>(hours * 360);
  std::printf(
      "| run | nodes | rows/s | intervals/s | real nodes kept up with | write ms p50 / p95 | "
      "maintain ms p50 / p95 |\n|---|---|---|---|---|---|---|\n");
  for (int n : sweep) {
    if (!reset_database(url)) return 1;
    print_write("sweep (10 simulated min)", n, write_fleet(url, shapes, n, 60));
  }
  if (!reset_database(url)) return 1;
  const WriteRun main_run = write_fleet(url, shapes, nodes, intervals);
  print_write("fleet", nodes, main_run);
  if (main_run.failures > 0) return 1;

  auto conn = PgConn::connect(url);
  auto store = PostgresStore::open(url);
  if (!conn || !store) return 1;
  auto size = (*store)->size_bytes();
  if (!size) return 1;
  const double node_days = nodes * hours / 24;
  std::printf(
      "\n%d nodes x %.2f h: %llu rows, %.0f MiB in the tables (%.2f GiB per node-day, raw tier and its "
      "rollups)\n",
      nodes, hours, static_cast<unsigned long long>(main_run.rows), static_cast<double>(*size) / 1048576,
      static_cast<double>(*size) / node_days / 1073741824);
  // Each tier's share of the tables: of the heap by its rows' bytes, of the indexes by
  // its rows (their keys have one width), over the node-days its rows cover.
  struct TierSize {
    double bytes = 0, node_days = 0;
    long long rows = 0;
  };
  TierSize tiers[3];
  for (const char* t : {"functions", "kernels", "gpus", "gpu_processes"}) {
    auto sizes = conn->query(fmt::format("SELECT pg_table_size('{0}'), pg_indexes_size('{0}')", t));
    auto split = conn->query(fmt::format(
        "SELECT tier, count(*), sum(pg_column_size(x.*))::bigint, count(DISTINCT (node, t_ns)), min(span_ns) "
        "FROM {} x GROUP BY tier",
        t));
    if (!sizes || !split) return 1;
    double all_rows = 0, all_bytes = 0;
    for (int i = 0; i < split->rows(); ++i) {
      all_rows += static_cast<double>(split->i64(i, 1));
      all_bytes += static_cast<double>(split->i64(i, 2));
    }
    for (int i = 0; i < split->rows(); ++i) {
      TierSize& ts = tiers[split->i64(i, 0)];
      ts.rows += split->i64(i, 1);
      ts.bytes += static_cast<double>(sizes->i64(0, 0)) * static_cast<double>(split->i64(i, 2)) / all_bytes +
                  static_cast<double>(sizes->i64(0, 1)) * static_cast<double>(split->i64(i, 1)) / all_rows;
      if (std::string(t) == "functions") {
        ts.node_days =
            static_cast<double>(split->i64(i, 3)) * static_cast<double>(split->i64(i, 4)) / 1e9 / 86400;
      }
    }
  }
  std::printf(
      "| tier | rows | MiB | bytes per node-day | kept (default) | full tier, per node |\n"
      "|---|---|---|---|---|---|\n");
  const char* names[] = {"raw (10 s)", "1 minute", "1 hour"};
  const double keep_days[] = {1, 7, 90};
  double full = 0;
  for (int t = 0; t < 3; ++t) {
    const double per_day = tiers[t].node_days > 0 ? tiers[t].bytes / tiers[t].node_days : 0;
    full += per_day * keep_days[t];
    std::printf("| %s | %lld | %.1f | %.1f MiB | %.0f days | %.1f MiB |\n", names[t], tiers[t].rows,
                tiers[t].bytes / 1048576, per_day / 1048576, keep_days[t], per_day * keep_days[t] / 1048576);
  }
  std::printf("| every tier full | | | | | %.1f GiB per node (%.1f TiB for 1,000 nodes) |\n",
              full / 1073741824, full * 1000 / 1099511627776.0);

  // The queries, at the end of the simulated time (the windows hold what was written).
  const std::int64_t now = kT0 + intervals * 10 * kS;
  const Retention retention;
  struct Q {
    const char* name;
    std::int64_t back_ns;
    bool one_node;
    int kind;  // 0 functions, 1 processes, 2 gpus, 3 kernels
  };
  const Q queries[] = {
      {"functions, 1 h, one node", 3600 * kS, true, 0},
      {"functions, 1 h, fleet", 3600 * kS, false, 0},
      {"functions, 24 h, one node", 86400 * kS, true, 0},
      {"functions, 24 h, fleet", 86400 * kS, false, 0},
      {"functions, 7 d, one node", kS * 86400 * 7, true, 0},
      {"functions, 30 d, fleet", kS * 86400 * 30, false, 0},
      {"processes, 1 h, fleet", 3600 * kS, false, 1},
      {"gpus, 1 h, fleet (1 min step)", 3600 * kS, false, 2},
      {"gpus, 24 h, one node (1 min step)", 86400 * kS, true, 2},
      {"kernels, 1 h, fleet", 3600 * kS, false, 3},
  };
  std::printf("\n| query | tier | rows answered | p50 ms | p95 ms |\n|---|---|---|---|---|\n");
  for (const auto& q : queries) {
    HistoryQuery hq;
    hq.from_ns = now - q.back_ns;
    hq.to_ns = now;
    if (q.one_node) hq.node = "gpu-node-0";
    const Tier tier = (*store)->tier_for(hq, now, retention);
    std::vector<double> ms;
    std::size_t answered = 0;
    for (int k = 0; k < repeat; ++k) {
      const auto t0 = Clock::now();
      bool ok = true;
      switch (q.kind) {
        case 0: {
          auto r = (*store)->functions(hq, tier);
          ok = static_cast<bool>(r);
          if (r) answered = r->size();
          break;
        }
        case 1: {
          auto r = (*store)->processes(hq, tier);
          ok = static_cast<bool>(r);
          if (r) answered = r->rows.size();
          break;
        }
        case 2: {
          auto r = (*store)->gpus(hq, tier);
          ok = static_cast<bool>(r);
          if (r) answered = r->size();
          break;
        }
        default: {
          auto r = (*store)->kernels(hq, tier);
          ok = static_cast<bool>(r);
          if (r) answered = r->size();
          break;
        }
      }
      if (!ok) {
        std::fprintf(stderr, "query %s failed\n", q.name);
        return 1;
      }
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
    std::printf("| %s | %s | %zu | %.1f | %.1f |\n", q.name, tier_name(tier), answered, pct(ms, 0.5),
                pct(ms, 0.95));
  }
  return 0;
}
