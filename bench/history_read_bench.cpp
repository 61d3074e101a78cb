// The history's reading side on a busy node's store: a SQLite file written by the real
// writer code (SqliteStore, maintenance every minute of a compressed clock) with
// `--per-hour` short processes an hour (each 1 to 3 intervals of 6 to 10 functions, in
// jobs of 8 ranks; one in 10 with a slow call, one in 20 leaking at exit) beside 8
// training processes of 20 functions, 100 kernels and 8 GPUs; then every
// /api/v1/history/* route through the real server (HttpServer, HistoryReader), for a 1 h
// window and the whole store, each while another request (the whole store's processes)
// runs, and `eacgm history` over the whole store. The file is made once and reused while
// it has the shape asked for.
//   build/bench/eacgm_bench_history_read [--db /tmp/eacgm-bench-read.db] [--hours 24]
//     [--per-hour 10000] [--repeat 20] [--eacgm build/eacgm] [--rebuild]
#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "busy_node.h"
#include "history/history_reader.h"
#include "history/sqlite_store.h"
#include "server/api_client.h"
#include "server/history_routes.h"
#include "server/http_server.h"

namespace {

using namespace eacgm;
using namespace eacgm::history;
using Clock = std::chrono::steady_clock;
constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kInterval = 10 * kS;
constexpr const char* kNode = "gpu-node-017";

struct Options {
  std::string db = "/tmp/eacgm-bench-read.db";
  double hours = 24;
  int per_hour = 10000;
  int repeat = 20;
  std::string eacgm = "build/eacgm";
  bool rebuild = false;
};

using bench::Shapes;

Shapes make_shapes() {
  Shapes s;
  for (const auto& sk : bench::lognormal_sketches(32, 20, 5))
    s.sketches.push_back(coarsened(sk, kStoredBits));
  for (const char* f : {"cudaMalloc",
                        "cudaFree",
                        "cudaMemcpy",
                        "cudaMemcpyAsync",
                        "cudaLaunchKernel",
                        "cudaStreamSynchronize",
                        "cudaDeviceSynchronize",
                        "cudaEventRecord",
                        "cudaGetDevice",
                        "cudaSetDevice",
                        "cuInit",
                        "cuModuleLoadData",
                        "cuMemAlloc_v2",
                        "cuLaunchKernel",
                        "cuCtxSynchronize",
                        "cuStreamSynchronize",
                        "ncclAllReduce",
                        "ncclBroadcast",
                        "ncclAllGather",
                        "ncclReduceScatter"}) {
    s.functions.emplace_back(f);
  }
  for (int k = 0; k < 100; ++k) {
    s.kernels.push_back(
        "void at::native::elementwise_kernel<128, 4, at::native::BinaryFunctor<float> >(int)#" +
        std::to_string(k));
  }
  return s;
}

FunctionRecord function_row(const Shapes& s, ProcessKey key, std::size_t f, std::size_t shape) {
  FunctionRecord fr;
  fr.process = key;
  fr.domain = f < 16 ? "cuda" : "nccl";
  fr.function = s.functions[f];
  fr.latency = s.sketches[shape % s.sketches.size()];
  fr.calls = fr.timed = fr.latency.count;
  fr.errors = f == 0 ? 1 : 0;
  return fr;
}

// Short process `k`: where it starts, how long it lives, what it is.
struct ShortProcess {
  std::int64_t first = 0;  // its first interval
  int intervals = 1;
  ProcessRecord record;
};

ShortProcess short_process(std::int64_t k, std::int64_t t0, int per_hour) {
  ShortProcess p;
  p.first = k * 360 / per_hour;
  p.intervals = 1 + static_cast<int>(k % 3);
  ProcessRecord& r = p.record;
  r.key = {static_cast<std::uint32_t>(100000 + k % 3'000'000), t0 + k * 1000};
  r.comm = k % 4 == 0 ? "nvidia-smi" : "python3";
  r.cmdline = r.comm + " eval.py --shard " + std::to_string(k);
  if (k % 4 != 0) {
    r.job = std::to_string(700000 + k / 8);
    r.rank = k % 8;
    r.world_size = 8;
  }
  r.first_ns = t0 + p.first * kInterval;
  return p;
}

IntervalBatch interval(const Shapes& s, std::int64_t i, std::int64_t t0, int per_hour) {
  IntervalBatch b;
  b.t_ns = t0 + i * kInterval;
  b.span_ns = kInterval;
  b.mode = "always-on";
  for (std::uint32_t p = 0; p < 8; ++p) {
    const ProcessKey key{1000 + p, t0 - kS};
    ProcessRecord r;
    r.key = key;
    r.comm = "python3";
    r.cmdline = "python3 train.py --rank " + std::to_string(p);
    r.rank = p;
    r.world_size = 8;
    r.job = "4242";
    r.first_ns = t0;
    r.last_ns = b.t_ns + b.span_ns;
    b.processes.push_back(r);
    for (std::size_t f = 0; f < 20; ++f) b.functions.push_back(function_row(s, key, f, f + p + i));
    b.gpu_processes.push_back({p, key, 10, 40ULL << 30, 80, 0, 4000.0, 4000.0});
  }
  // The short processes alive in this interval (each lives at most 3).
  const std::int64_t first_k = std::max<std::int64_t>(0, (i - 3) * per_hour / 360 - 1);
  for (std::int64_t k = first_k; k * 360 / per_hour <= i; ++k) {
    ShortProcess sp = short_process(k, t0, per_hour);
    if (i < sp.first || i >= sp.first + sp.intervals) continue;
    const bool last = i == sp.first + sp.intervals - 1;
    sp.record.last_ns = b.t_ns + b.span_ns;
    sp.record.exited = last;
    b.processes.push_back(sp.record);
    const int functions = 6 + static_cast<int>(k % 5);
    for (int f = 0; f < functions; ++f) {
      b.functions.push_back(function_row(s, sp.record.key, static_cast<std::size_t>(f), k + f));
    }
    if (last && k % 10 == 0) {
      b.anomalies.push_back(
          {b.t_ns + kS, b.t_ns + 3 * kS, sp.record.key, "call", "cuda", "cudaMemcpy", 8.5, 2.0e9, 1.2e5});
    }
    if (last && k % 20 == 0) b.leaks.push_back({sp.record.key, 0, 3, 3ULL << 20});
  }
  for (const auto& k : s.kernels) b.kernels.push_back({k, 1000});
  bench::add_busy_gpus(b);
  return b;
}

// The shape a file was made with (meta "bench_shape"), to reuse only a file of the shape
// asked for.
std::int64_t shape_key(const Options& o) {
  return static_cast<std::int64_t>(o.hours * 1000) * 1'000'000 + o.per_hour;
}

std::int64_t meta_value(const std::string& db, const std::string& key) {
  sqlite3* h = nullptr;
  std::int64_t v = -1;
  if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, "SELECT value FROM meta WHERE key = ?", -1, &st, nullptr) == SQLITE_OK) {
      sqlite3_bind_text(st, 1, key.c_str(), -1, SQLITE_TRANSIENT);
      if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(h);
  return v;
}

// Writes the store; returns the end of its last interval (or -1).
std::int64_t build(const Options& o) {
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(o.db + suffix);
  auto store = SqliteStore::open(o.db);
  if (!store) {
    std::fprintf(stderr, "%s\n", store.error().c_str());
    return -1;
  }
  const Shapes shapes = make_shapes();
  const auto intervals = static_cast<std::int64_t>(o.hours * 360);
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  const std::int64_t t0 = (now / kInterval) * kInterval - intervals * kInterval;
  Retention keep;
  keep.max_bytes = 0;  // the whole day stays: the cap is not what is measured
  std::uint64_t rows = 0;
  const auto start = Clock::now();
  for (std::int64_t i = 0; i < intervals; ++i) {
    const IntervalBatch b = interval(shapes, i, t0, o.per_hour);
    rows += b.processes.size() + b.functions.size() + b.kernels.size() + b.gpus.size() +
            b.gpu_processes.size() + b.anomalies.size() + b.leaks.size();
    if (auto st = (*store)->write(kNode, b); !st) {
      std::fprintf(stderr, "write: %s\n", st.error().c_str());
      return -1;
    }
    if ((i + 1) % 6 == 0) {
      if (auto st = (*store)->maintain(kNode, b.t_ns + b.span_ns, keep); !st) {
        std::fprintf(stderr, "maintain: %s\n", st.error().c_str());
        return -1;
      }
    }
  }
  auto size = (*store)->size_bytes();
  std::printf("made %s: %.1f h, %d short processes an hour, %llu rows in %.0f s, %.0f MiB\n", o.db.c_str(),
              o.hours, o.per_hour, static_cast<unsigned long long>(rows),
              std::chrono::duration<double>(Clock::now() - start).count(),
              size ? static_cast<double>(*size) / 1048576 : 0.0);
  store->reset();
  sqlite3* h = nullptr;
  sqlite3_open(o.db.c_str(), &h);
  sqlite3_exec(h, fmt::format("INSERT INTO meta(key, value) VALUES('bench_shape', {})", shape_key(o)).c_str(),
               nullptr, nullptr, nullptr);
  sqlite3_close(h);
  return t0 + intervals * kInterval;
}

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

struct Timed {
  std::vector<double> ms;
  std::size_t bytes = 0;
  int failures = 0;
};

Timed time_route(server::ApiClient& client, const std::string& path, int repeat) {
  Timed t;
  for (int i = 0; i < repeat; ++i) {
    const auto start = Clock::now();
    auto reply = client.get(path);
    t.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!reply || reply->status != 200) {
      ++t.failures;
      if (t.failures == 1)
        std::fprintf(stderr, "%s: %s\n", path.c_str(), reply ? reply->body.c_str() : reply.error().c_str());
      continue;
    }
    t.bytes = reply->body.size();
  }
  return t;
}

// `eacgm history` over [from, to): wall time and lines printed.
Timed time_cli(const Options& o, std::int64_t from, std::int64_t to, int repeat, std::size_t& lines) {
  Timed t;
  const std::string cmd =
      fmt::format("{} history --store sqlite:{} --from {} --until {}", o.eacgm, o.db, from / kS, to / kS);
  std::printf("\n`%s`:\n", cmd.c_str());
  for (int i = 0; i < repeat; ++i) {
    const auto start = Clock::now();
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    std::string out;
    char buf[65536];
    for (std::size_t n; p != nullptr && (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    const int rc = p != nullptr ? pclose(p) : -1;
    t.ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (rc != 0) ++t.failures;
    t.bytes = out.size();
    lines = static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n'));
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--rebuild") {
      o.rebuild = true;
      continue;
    }
    if (a == "--db") o.db = v;
    if (a == "--hours") o.hours = std::atof(v);
    if (a == "--per-hour") o.per_hour = std::atoi(v);
    if (a == "--repeat") o.repeat = std::atoi(v);
    if (a == "--eacgm") o.eacgm = v;
    ++i;
  }
  std::int64_t end = meta_value(o.db, "written_to:" + std::string(kNode));
  if (o.rebuild || end <= 0 || meta_value(o.db, "bench_shape") != shape_key(o)) end = build(o);
  if (end <= 0) return 1;
  const std::int64_t whole = static_cast<std::int64_t>(o.hours * 3600) * kS;

  auto reader = std::make_shared<HistoryReader>("sqlite:" + o.db, Retention{});
  server::HttpServer http;
  server::add_history_routes(http, reader);
  server::ServerOptions so;
  so.port = 0;
  if (auto st = http.start(so); !st) {
    std::fprintf(stderr, "%s\n", st.error().c_str());
    return 1;
  }
  const std::string url = "http://127.0.0.1:" + std::to_string(http.port());
  auto client = server::ApiClient::open(url, "", std::chrono::seconds(600));
  auto other_client = server::ApiClient::open(url, "", std::chrono::seconds(600));
  if (!client || !other_client) return 1;

  // Another request all along: the whole store's processes, again and again.
  const std::string other =
      fmt::format("/api/v1/history/processes?from={}&to={}", (end - whole) / kS, end / kS);
  std::atomic<bool> stop{false};
  std::atomic<int> other_done{0};
  std::thread background([&] {
    while (!stop) {
      (void)(*other_client)->get(other);
      ++other_done;
    }
  });
  std::printf("\n| route | window | p50 ms | p95 ms | max ms | bytes |\n|---|---|---|---|---|---|\n");
  const char* routes[] = {"processes", "jobs", "functions", "kernels", "gpus", "anomalies"};
  for (const std::int64_t span : {3600 * kS, whole}) {
    for (const char* route : routes) {
      const std::string path =
          fmt::format("/api/v1/history/{}?from={}&to={}", route, (end - span) / kS, end / kS);
      const Timed t = time_route(**client, path, o.repeat);
      std::printf("| %s | %s | %.1f | %.1f | %.1f | %zu |%s\n", route, span == whole ? "whole" : "1 h",
                  pct(t.ms, 0.5), pct(t.ms, 0.95), pct(t.ms, 1.0), t.bytes,
                  t.failures ? fmt::format(" {} failed", t.failures).c_str() : "");
      std::fflush(stdout);
    }
  }
  stop = true;
  background.join();
  std::printf("(the other request ran %d times meanwhile)\n", other_done.load());
  http.stop();
  std::size_t lines = 0;
  const Timed cli = time_cli(o, end - whole, end, std::max(3, o.repeat / 4), lines);
  std::printf("eacgm history: p50 %.0f ms, max %.0f ms, %zu lines, %zu bytes%s\n", pct(cli.ms, 0.5),
              pct(cli.ms, 1.0), lines, cli.bytes, cli.failures ? " (failed)" : "");
  return 0;
}
