// The PostgreSQL history's clock: each write samples the server's clock between two
// readings of the node's (CLOCK_REALTIME, the clock of every timestamp the agent
// writes), and the node's row of node_clocks holds the best recent estimate.
#include <time.h>

#include "history/postgres_store.h"

namespace eacgm::history {
namespace {

// clock_timestamp() is the server's time at the moment the statement reads it (not the
// transaction's start), in microseconds.
constexpr const char* kServerClock = "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint";
constexpr std::int64_t kServerResolutionNs = 1000;

std::int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

Status PostgresStore::sample_clock() {
  ClockSample s;
  s.resolution_ns = kServerResolutionNs;
  s.t0_ns = realtime_ns();
  auto r = conn_.query(kServerClock);
  s.t1_ns = realtime_ns();
  if (!r) return std::move(r).take_error();
  if (r->rows() != 1 || r->is_null(0, 0)) return make_error("reading the server's clock: no answer");
  s.reference_ns = r->i64(0, 0) * 1000;
  clock_.add(s);
  return {};
}

Status PostgresStore::record_clock(std::int32_t node) {
  const auto best = clock_.best();
  if (!best) return {};
  return conn_.exec(
      "INSERT INTO node_clocks(node, measured_ns, offset_ns, uncertainty_ns) VALUES($1, $2, $3, $4) "
      "ON CONFLICT(node) DO UPDATE SET measured_ns = excluded.measured_ns, offset_ns = excluded.offset_ns, "
      "uncertainty_ns = excluded.uncertainty_ns",
      PgParams().i32(node).i64(best->measured_ns).i64(best->offset_ns).i64(best->uncertainty_ns));
}

}  // namespace eacgm::history
