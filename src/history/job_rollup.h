// The job report's hour rollups (schema.h: job_gpus, job_calls): made from a node's hour
// rows once its maintenance has rolled the hour up, in the same SQL for both stores, so
// that a report over weeks reads each process's hour once, without the GPUs' window, the
// joins or the latency sketches.
#pragma once

#include <cstdint>
#include <string>

#include "history/schema_rows.h"
#include "history/schema_sql.h"
#include "history/window_sql.h"

namespace eacgm::history {

// The meta key of how far a node's hours are in the job rollups (every hour row before it).
inline constexpr const char* kJobsRolledKey = "rolled_jobs:";
// A rollup of weeks (a store older than the rollups) is made a day at a time.
inline constexpr std::int64_t kJobRollupChunkNs = 24LL * 3600 * 1'000'000'000;

// Deletes a node's rows of the rollup `t` in [from, to): parameters 1 node, 2 from, 3 to.
std::string job_rollup_delete_sql(Dialect d, const Table& t);
// Fills job_gpus from the node's hour rows of gpu_processes and gpus in [from, to), each
// with what all of its GPU's processes did that hour: parameters 1 node, 2 from, 3 to.
std::string job_gpus_roll_sql(Dialect d);
// The node's hour rows of functions that job_calls keeps (the waits and GPU time a job
// report reads), as get_job_call_source reads them.
QuerySql job_calls_source_sql(Dialect d, std::int64_t node, std::int64_t from_ns, std::int64_t to_ns);
// " (t.function IN (...) OR t.domain = (...))": a row of functions (alias t) whose
// function may be a wait (host_wait_function_names) or whose domain is the GPU time's.
std::string waits_or_gpu_time(QuerySql& s);
// The first hour row of the node (gpu_processes or functions): parameter 1 the node.
std::string first_hour_row_sql(Dialect d);

// One row of job_calls.
struct JobCallRecord {
  std::int64_t t_ns = 0, span_ns = 0;
  std::int32_t pid = 0;
  std::int64_t start_ns = 0;
  std::int32_t domain = 0, function = 0;  // ids into names
  std::uint64_t calls = 0, timed = 0, estimated = 0, latency_count = 0, latency_sum_ns = 0;
};

// t_ns, span_ns, pid, start_ns, domain, function, calls, timed, estimated, latency.
template <class In>
JobCallRecord get_job_call_source(const In& in) {
  JobCallRecord r;
  StoredSketch latency;
  RowReader<In> reader{in};
  fields(reader, r.t_ns, r.span_ns, r.pid, r.start_ns, r.domain, r.function, r.calls, r.timed, r.estimated,
         latency);
  r.latency_count = latency.count;
  r.latency_sum_ns = latency.sum_ns;
  return r;
}

// Each record at its own hour (`at` gives the tier and the node).
template <class Out>
void put_row(Out& out, const RowPlace& at, const JobCallRecord& r) {
  RowWriter<Out> w{out};
  fields(w, at.tier, at.node, r.t_ns, r.span_ns, r.pid, r.start_ns, r.domain, r.function, r.calls, r.timed,
         r.estimated, r.latency_count, r.latency_sum_ns);
}

}  // namespace eacgm::history
