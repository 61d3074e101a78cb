// The fleet simulation's write load on PostgreSQL, per node, in the two ways a node can
// keep its history (docs/history.md, "Two stores"):
//   direct  every 10 s interval written to PostgreSQL ([store] url = postgresql://...),
//           rolled up by the node's maintenance there each simulated minute;
//   ship    every interval written to the node's own SQLite file, maintained there each
//           simulated minute, and its rollups and facts shipped to PostgreSQL after each
//           maintenance ([store] fleet_url; history/fleet_shipper.h).
// `nodes` writers (a thread and connections each, as agents have) write the busy 50-pod
// node's intervals (fleet_node.h: 1,946 rows each) back to back with a compressed clock,
// `minutes` simulated minutes each from 20 minutes before an hour boundary (so an hour's
// rows and job rollups are made and shipped). Per mode: the rows and bytes sent to the
// server (statements, parameters and COPY data) and the server's CPU (utime + stime of
// every process named postgres, from /proc) per simulated node-second; from them the
// nodes one PostgreSQL core carries and the bytes a node sends a day.
//   eacgm_bench_fleet_ship --url URL --dir DIR [--nodes 4] [--minutes 80] [--mode both|direct|ship]
// bench/fleet/run.sh ship starts a throwaway server and runs it.
#include <dirent.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fleet_node.h"
#include "history/fleet_shipper.h"
#include "history/postgres_store.h"
#include "history/sqlite_store.h"

namespace {

using namespace eacgm;
using namespace eacgm::history;
using Clock = std::chrono::steady_clock;
constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kMinute = 60 * kS;
constexpr std::int64_t kHour = 60 * kMinute;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}
std::string node_name(int n) { return fmt::format("gpu-node-{:04}", n); }

// CPU seconds of every process named postgres: the server, its live backends, and the
// backends it reaped (the server's cutime and cstime).
double postgres_cpu_seconds() {
  const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  double total = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string pid = e.path().filename();
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string line;
    if (!std::getline(in, line)) continue;
    const auto open = line.find('(');
    const auto close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    if (line.substr(open + 1, close - open - 1) != "postgres") continue;
    std::istringstream rest(line.substr(close + 2));
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 17 && rest >> field; ++i) {
      if (i >= 14) ticks += std::atof(field.c_str());
    }
    total += ticks / hz;
  }
  return total;
}

struct Options {
  std::string url;
  std::string dir;
  int nodes = 4;
  int minutes = 80;
  std::string mode = "both";
};

struct Run {
  std::uint64_t rows_made = 0;   // the intervals' rows
  std::uint64_t rows_sent = 0;   // rows that reached PostgreSQL
  std::uint64_t bytes_sent = 0;  // to PostgreSQL
  int failures = 0;
};

// One node: its intervals for `o.minutes` simulated minutes from `t0`.
Run write_node(const Options& o, bool ship, int n, std::int64_t t0) {
  const fleet::IntervalShapes shapes;
  Run mine;
  const std::string node = node_name(n) + (ship ? "-ship" : "-direct");
  const std::int64_t intervals = static_cast<std::int64_t>(o.minutes) * 6;
  auto fail = [&mine](const std::string& what) {
    std::fprintf(stderr, "fleet: %s\n", what.c_str());
    ++mine.failures;
    return mine;
  };
  Retention r;
  r.max_bytes = 0;
  if (!ship) {
    auto store = PostgresStore::open(o.url);
    if (!store) return fail(store.error());
    for (std::int64_t i = 0; i < intervals; ++i) {
      const std::int64_t t = t0 + i * 10 * kS;
      const IntervalBatch b = shapes.interval(static_cast<unsigned>(n), t, i);
      if (auto st = (*store)->write(node, b); !st) return fail("write: " + st.error());
      mine.rows_made += fleet::rows_of(b);
      if ((i + 1) % 6 == 0) {
        if (auto st = (*store)->maintain(node, t + b.span_ns, r); !st) return fail("maintain: " + st.error());
      }
    }
    mine.rows_sent = mine.rows_made;
    mine.bytes_sent = (*store)->sent_bytes();
    return mine;
  }
  const std::string path = fmt::format("{}/{}.db", o.dir, node);
  std::filesystem::remove(path);
  auto local = SqliteStore::open(path);
  if (!local) return fail(local.error());
  std::int64_t sim_now = t0;
  FleetShipperOptions so;
  so.node = node;
  so.local_path = path;
  so.fleet_url = o.url;
  so.retention = r;
  so.now_ns = [&sim_now] { return sim_now; };
  FleetShipper shipper(so, nullptr);
  for (std::int64_t i = 0; i < intervals; ++i) {
    const std::int64_t t = t0 + i * 10 * kS;
    const IntervalBatch b = shapes.interval(static_cast<unsigned>(n), t, i);
    if (auto st = (*local)->write(node, b); !st) return fail("write: " + st.error());
    mine.rows_made += fleet::rows_of(b);
    if ((i + 1) % 6 == 0) {
      sim_now = t + b.span_ns;
      if (auto st = (*local)->maintain(node, sim_now, r); !st) return fail("maintain: " + st.error());
      if (auto st = shipper.ship_once(); !st) return fail("ship: " + st.error());
    }
  }
  const FleetStats s = shipper.stats();
  mine.rows_sent = s.rows_shipped;
  mine.bytes_sent = s.bytes_sent;
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  std::filesystem::remove(path + "-shm");
  return mine;
}

int measure(const Options& o, bool ship, std::int64_t t0) {
  std::vector<Run> per(static_cast<std::size_t>(o.nodes));
  std::vector<std::thread> threads;
  const double cpu0 = postgres_cpu_seconds();
  const auto start = Clock::now();
  for (int n = 0; n < o.nodes; ++n) {
    threads.emplace_back([&, n] { per[static_cast<std::size_t>(n)] = write_node(o, ship, n, t0); });
  }
  for (auto& t : threads) t.join();
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu = postgres_cpu_seconds() - cpu0;
  Run all;
  for (const Run& r : per) {
    all.rows_made += r.rows_made;
    all.rows_sent += r.rows_sent;
    all.bytes_sent += r.bytes_sent;
    all.failures += r.failures;
  }
  if (all.failures > 0) return 1;
  // Per node and simulated second.
  const double node_seconds = static_cast<double>(o.nodes) * o.minutes * 60.0;
  const double cpu_per_node = cpu / node_seconds;  // PostgreSQL core-seconds per node-second
  std::printf("| %s | %d × %d min | %.1f s | %.1f | %.0f | %.2f MiB | %.2f ms | %.0f |\n",
              ship ? "ship (SQLite on the node, rollups and facts to PostgreSQL)"
                   : "direct (every interval to PostgreSQL)",
              o.nodes, o.minutes, wall, static_cast<double>(all.rows_sent) / node_seconds,
              static_cast<double>(all.bytes_sent) / node_seconds,
              static_cast<double>(all.bytes_sent) / node_seconds * 86400 / 1048576, cpu_per_node * 1000 * 10,
              cpu_per_node > 0 ? 1.0 / cpu_per_node : 0.0);
  std::printf("<!-- %s: %llu rows made, %llu sent, %llu bytes sent, PostgreSQL CPU %.2f s over %.1f s -->\n",
              ship ? "ship" : "direct", static_cast<unsigned long long>(all.rows_made),
              static_cast<unsigned long long>(all.rows_sent), static_cast<unsigned long long>(all.bytes_sent),
              cpu, wall);
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  Options o;
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "fleet: %s needs a value\n", a.c_str());
      return 2;
    }
    const char* v = argv[i + 1];
    if (a == "--url") {
      o.url = v;
    } else if (a == "--dir") {
      o.dir = v;
    } else if (a == "--nodes") {
      o.nodes = std::atoi(v);
    } else if (a == "--minutes") {
      o.minutes = std::atoi(v);
    } else if (a == "--mode") {
      o.mode = v;
    } else {
      std::fprintf(stderr, "fleet: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (o.url.empty() || o.dir.empty() || o.nodes < 1 || o.minutes < 1 ||
      (o.mode != "both" && o.mode != "direct" && o.mode != "ship")) {
    std::fprintf(stderr,
                 "usage: %s --url URL --dir DIR [--nodes 4] [--minutes 80] [--mode both|direct|ship]\n",
                 argv[0]);
    return 2;
  }
  // Whole simulated minutes from 20 minutes before an hour boundary, in the past.
  const std::int64_t t0 = (now_ns() - 3 * kHour) / kHour * kHour - 20 * kMinute;
  std::printf(
      "| mode | nodes × simulated | wall | rows/s per node to PostgreSQL | bytes/s per node | per node-day | "
      "PostgreSQL CPU per node (ms per 10 s) | nodes per PostgreSQL core "
      "|\n|---|---|---|---|---|---|---|---|\n");
  int rc = 0;
  if (o.mode != "ship") rc |= measure(o, false, t0);
  if (o.mode != "direct") rc |= measure(o, true, t0);
  return rc;
} catch (const std::exception& e) {
  std::fprintf(stderr, "fleet: %s\n", e.what());
  return 1;
}
