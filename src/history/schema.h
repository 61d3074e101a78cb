// The history's tables, described once: per table its columns (logical type, NOT NULL,
// default, the schema version that added it, how the values of one key combine), its key
// and indexes. Each store renders its DDL, migration steps, writes and rollups from it in
// its own dialect and physical layout (schema_sql.h); records map to rows in schema_rows.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace eacgm::history {

// The schema this build writes and reads; a store written by a newer one is refused.
inline constexpr int kSchemaVersion = 14;
// From this version on PostgreSQL lays an interval table (TableKind::kTiered) out for time:
// partitioned by tier (LIST), each tier by day of t_ns (RANGE), so that retention drops a
// tier's whole days and a window's reads prune to its days (docs/history.md).
inline constexpr int kPartitionedSince = 11;

// Logical types; each store names them in its own words (SQLite INTEGER for every integer,
// PostgreSQL SMALLINT / INTEGER / BIGINT).
enum class ColumnType : std::uint8_t { kInt16, kInt32, kInt64, kReal, kText, kBlob };

// How the values of a column combine where rows of one key meet: rows rolled up into a
// minute or an hour, a row written again onto one already there.
enum class Combine : std::uint8_t {
  kNone,         // keys, events and rows a write replaces: never combined
  kSum,          // added up
  kSketch,       // latency sketches, merged (SQLite in SQL; PostgreSQL in C++)
  kMax,          // the largest (a row meeting one there takes an unknown value as 0)
  kMin,          // the smallest (likewise)
  kMean,         // a mean weighted by the row's `samples`; a rolled row already there keeps its own
  kSame,         // the same in every row of the key (a GPU's name): a rollup keeps the largest,
                 // a rolled row already there its own
  kLatestKnown,  // the newest value unless it is unknown (NULL, or '' for text)
};

// A copy of `v` with one member set (the builders below).
template <class T, class M, class V>
constexpr T with_member(T v, M T::*member, V value) {
  v.*member = value;
  return v;
}

struct Column {
  constexpr Column() = default;
  constexpr Column(std::string_view n, ColumnType t, Combine c = Combine::kNone)
      : name(n), type(t), combine(c) {}

  std::string_view name;
  ColumnType type = ColumnType::kInt64;
  Combine combine = Combine::kNone;
  bool not_null = true;
  std::string_view default_sql = {};  // SQL of the default, empty for none
  int since = 1;                      // the schema version that added it
  bool name_id = false;               // an id into `names`
  bool unique = false;
  bool identity = false;  // made by the store on insert (an id of `names`)

  constexpr Column nullable() const { return with_member(*this, &Column::not_null, false); }
  constexpr Column defaults(std::string_view sql) const {
    return with_member(*this, &Column::default_sql, sql);
  }
  constexpr Column added_in(int version) const { return with_member(*this, &Column::since, version); }
  constexpr Column names() const { return with_member(*this, &Column::name_id, true); }
  constexpr Column unique_values() const { return with_member(*this, &Column::unique, true); }
  // The key's ids, made by the store on insert (NOT NULL is left to the key).
  constexpr Column made_by_store() const { return with_member(nullable(), &Column::identity, true); }
};

struct Index {
  std::string_view name;
  std::span<const std::string_view> columns = {};
  int since = 1;
  // From this version on PostgreSQL makes it a BRIN index (rows written in the order of
  // its column: a few pages of summaries instead of a B-tree to keep up); 0 never.
  int brin_since = 0;
};

// kTiered: rows of intervals (tier 0 raw, 1 minute, 2 hour) that roll up. Their first
// columns are (tier, node, t_ns, span_ns) and their key starts (tier, node, t_ns); each
// store orders that prefix for its own reads (and may partition on t_ns).
enum class TableKind : std::uint8_t { kPlain, kTiered };

struct Table {
  std::string_view name;
  TableKind kind = TableKind::kPlain;
  std::span<const Column> columns = {};
  std::span<const std::string_view> key = {};  // the primary key, logical order; empty for none
  std::span<const Index> indexes = {};
  int since = 1;  // 0: made before any version (meta, which holds the version)
  // A row written onto a key already there replaces it (else their values combine).
  bool replace_on_write = false;
  // A rollup the fleet store makes from what its nodes write or ship (a node's own store
  // keeps it empty): never shipped, since a shipped part replaces its table's range.
  bool fleet_rollup = false;

  constexpr Table added_in(int version) const { return with_member(*this, &Table::since, version); }
  constexpr Table rows_replaced() const { return with_member(*this, &Table::replace_on_write, true); }
  constexpr Table made_by_fleet_store() const { return with_member(*this, &Table::fleet_rollup, true); }

  constexpr bool tiered() const { return kind == TableKind::kTiered; }
  // The column named `n`; nullptr when there is none.
  constexpr const Column* column(std::string_view n) const {
    for (const Column& c : columns) {
      if (c.name == n) return &c;
    }
    return nullptr;
  }
  constexpr bool in_key(std::string_view n) const {
    for (auto k : key) {
      if (k == n) return true;
    }
    return false;
  }
};

namespace tables {

using T = ColumnType;
using C = Combine;

// The columns every interval table starts with.
template <std::size_t N>
constexpr std::array<Column, N + 4> tiered(const std::array<Column, N>& rest) {
  std::array<Column, N + 4> out{Column{"tier", T::kInt16}, Column{"node", T::kInt32}.names(),
                                Column{"t_ns", T::kInt64}, Column{"span_ns", T::kInt64}};
  for (std::size_t i = 0; i < N; ++i) out[i + 4] = rest[i];
  return out;
}

template <std::size_t A, std::size_t B>
constexpr std::array<Column, A + B> joined(const std::array<Column, A>& a, const std::array<Column, B>& b) {
  std::array<Column, A + B> out{};
  for (std::size_t i = 0; i < A; ++i) out[i] = a[i];
  for (std::size_t i = 0; i < B; ++i) out[A + i] = b[i];
  return out;
}

// The schema version and, per node, how far it has written and rolled up.
inline constexpr Column kMetaColumns[] = {
    // Version 1 declared it without NOT NULL (PostgreSQL makes a key NOT NULL anyway).
    Column{"key", T::kText}.nullable().added_in(0),
    Column{"value", T::kInt64}.added_in(0),
};
inline constexpr std::string_view kMetaKey[] = {"key"};
inline constexpr Table kMeta = Table{"meta", TableKind::kPlain, kMetaColumns, kMetaKey}.added_in(0);

// Every node, domain, function, kernel and GPU name once: rows hold their ids.
inline constexpr Column kNameColumns[] = {
    Column{"id", T::kInt32}.made_by_store(),
    Column{"name", T::kText}.unique_values(),
};
inline constexpr std::string_view kNamesKey[] = {"id"};
inline constexpr Table kNames{"names", TableKind::kPlain, kNameColumns, kNamesKey, {}};

// A process is (node, pid, start_ns): a pid reused after a restart is another process. Its
// row is written again each interval it is seen: its span grows, its facts stay once known.
inline constexpr Column kProcessColumns[] = {
    Column{"node", T::kInt32}.names(),
    Column{"pid", T::kInt32},
    Column{"start_ns", T::kInt64},
    Column{"comm", T::kText, C::kLatestKnown}.defaults("''"),
    Column{"cmdline", T::kText, C::kLatestKnown}.defaults("''"),
    Column{"rank", T::kInt64, C::kLatestKnown}.nullable(),
    Column{"local_rank", T::kInt64, C::kLatestKnown}.nullable(),
    Column{"world_size", T::kInt64, C::kLatestKnown}.nullable(),
    Column{"container", T::kText, C::kLatestKnown}.defaults("''"),
    Column{"pod", T::kText, C::kLatestKnown}.defaults("''"),
    Column{"first_ns", T::kInt64, C::kMin},
    Column{"last_ns", T::kInt64, C::kMax},
    Column{"exited", T::kInt16, C::kMax}.defaults("0"),
    // Version 2: its workload (sample/workload.h); `pod` was there, never written.
    Column{"pod_uid", T::kText, C::kLatestKnown}.defaults("''").added_in(2),
    Column{"namespace", T::kText, C::kLatestKnown}.defaults("''").added_in(2),
    Column{"container_name", T::kText, C::kLatestKnown}.defaults("''").added_in(2),
    Column{"job", T::kText, C::kLatestKnown}.defaults("''").added_in(2),
    Column{"job_step", T::kText, C::kLatestKnown}.defaults("''").added_in(2),
};
inline constexpr std::string_view kProcessKey[] = {"node", "pid", "start_ns"};
inline constexpr std::string_view kByLast[] = {"last_ns"};
inline constexpr std::string_view kByJob[] = {"job"};
inline constexpr Index kProcessIndexes[] = {{"processes_last", kByLast}, {"processes_job", kByJob, 2}};
inline constexpr Table kProcesses{"processes", TableKind::kPlain, kProcessColumns, kProcessKey,
                                  kProcessIndexes};

// Each interval a node wrote, with the agent's mode then (what its estimates mean).
inline constexpr Column kIntervalColumns[] = {
    Column{"node", T::kInt32}.names(),
    Column{"t_ns", T::kInt64},
    Column{"span_ns", T::kInt64},
    Column{"mode", T::kText}.defaults("''"),
};
inline constexpr std::string_view kIntervalKey[] = {"node", "t_ns"};
inline constexpr Table kIntervals =
    Table{"intervals", TableKind::kPlain, kIntervalColumns, kIntervalKey}.rows_replaced();

// Calls of one function with their latency (a process's in `functions`, a node's in
// `function_totals`).
inline constexpr std::array kFunctionSumColumns{
    Column{"domain", T::kInt32}.names(),
    Column{"function", T::kInt32}.names(),
    Column{"calls", T::kInt64, C::kSum},
    Column{"errors", T::kInt64, C::kSum},
    Column{"bytes", T::kInt64, C::kSum},
    Column{"timed", T::kInt64, C::kSum},
    Column{"estimated", T::kInt64, C::kSum},
    Column{"calls_variance", T::kReal, C::kSum},
    Column{"latency", T::kBlob, C::kSketch}.nullable(),
};

// A process's calls of one function in an interval, with their latency.
inline constexpr auto kFunctionColumns = tiered(joined(
    std::array{
        Column{"pid", T::kInt32},
        Column{"start_ns", T::kInt64},
    },
    kFunctionSumColumns));
inline constexpr std::string_view kFunctionKey[] = {"tier",     "node",   "t_ns",    "pid",
                                                    "start_ns", "domain", "function"};
inline constexpr Table kFunctions{"functions", TableKind::kTiered, kFunctionColumns, kFunctionKey, {}};

// A node's launches of one kernel (not split by process).
inline constexpr auto kKernelColumns = tiered(std::array{
    Column{"kernel", T::kInt32}.names(),
    Column{"launches", T::kInt64, C::kSum},
});
inline constexpr std::string_view kKernelKey[] = {"tier", "node", "t_ns", "kernel"};
inline constexpr Table kKernels{"kernels", TableKind::kTiered, kKernelColumns, kKernelKey, {}};

// A GPU's samples over an interval: means and maxima. Version 5: its profiling counters
// (NVML GPM, core/gpu_sample.h) as ratios, NULL where the GPU has no GPM. Version 6: its
// energy over the interval in mJ (interval_builder.h), and the part of the span that
// NVML's energy counter measured (the rest is mean power times time).
inline constexpr auto kGpuColumns = tiered(std::array{
    Column{"gpu", T::kInt32},
    Column{"uuid", T::kInt32, C::kSame}.names(),
    Column{"name", T::kInt32, C::kSame}.names(),
    Column{"samples", T::kInt64, C::kSum},
    Column{"util_mean", T::kReal, C::kMean}.nullable(),
    Column{"util_max", T::kInt64, C::kMax}.nullable(),
    Column{"memory_used_mean", T::kReal, C::kMean}.nullable(),
    Column{"memory_used_max", T::kInt64, C::kMax}.nullable(),
    Column{"memory_total", T::kInt64, C::kSame}.nullable(),
    Column{"power_mean_w", T::kReal, C::kMean}.nullable(),
    Column{"power_max_w", T::kReal, C::kMax}.nullable(),
    Column{"temperature_max", T::kInt64, C::kMax}.nullable(),
    Column{"sm_active_mean", T::kReal, C::kMean}.nullable().added_in(5),
    Column{"sm_active_max", T::kReal, C::kMax}.nullable().added_in(5),
    Column{"tensor_active_mean", T::kReal, C::kMean}.nullable().added_in(5),
    Column{"tensor_active_max", T::kReal, C::kMax}.nullable().added_in(5),
    Column{"dram_active_mean", T::kReal, C::kMean}.nullable().added_in(5),
    Column{"dram_active_max", T::kReal, C::kMax}.nullable().added_in(5),
    Column{"energy_mj", T::kReal, C::kSum}.nullable().added_in(6),
    Column{"energy_counter_ns", T::kInt64, C::kSum}.nullable().added_in(6),
});
inline constexpr std::string_view kGpuKey[] = {"tier", "node", "t_ns", "gpu"};
inline constexpr Table kGpus = Table{"gpus", TableKind::kTiered, kGpuColumns, kGpuKey}.rows_replaced();

// A process on a GPU over an interval: the sampling passes that listed it. Version 6:
// those of them in which the GPU's activity was under [report] idle_threshold. Version 7:
// the GPU's power summed over the passes that listed it, so that a job's part of an
// interval's energy is that of its passes, not its share of them (a GPU draws more while
// the job runs than idle before it comes or after it goes).
inline constexpr std::array kGpuProcessValues{
    Column{"gpu", T::kInt32},
    Column{"pid", T::kInt32},
    Column{"start_ns", T::kInt64},
    Column{"samples", T::kInt64, C::kSum},
    Column{"memory_max", T::kInt64, C::kMax}.nullable(),
    Column{"sm_mean", T::kReal, C::kMean}.nullable(),
    Column{"idle_samples", T::kInt64, C::kSum}.nullable().added_in(6),
    Column{"power_sum_w", T::kReal, C::kSum}.nullable().added_in(7),
};
// Version 13: the process's share of that power, pass by pass (each pass's power split
// among the processes it listed on the GPU by SM share, else equally), so that the
// processes of a shared GPU divide each pass's energy whole, whatever passes each held.
// Last in job_gpus too, where ALTER TABLE appends it.
inline constexpr std::array kGpuProcessShare{
    Column{"power_share_w", T::kReal, C::kSum}.nullable().added_in(13),
};
inline constexpr auto kGpuProcessColumns = tiered(joined(kGpuProcessValues, kGpuProcessShare));
inline constexpr std::string_view kGpuProcessKey[] = {"tier", "node", "t_ns", "gpu", "pid", "start_ns"};
inline constexpr Table kGpuProcesses =
    Table{"gpu_processes", TableKind::kTiered, kGpuProcessColumns, kGpuProcessKey}.rows_replaced();

// Slow calls and slow intervals, as the analysis found them.
inline constexpr Column kAnomalyColumns[] = {
    Column{"node", T::kInt32}.names(),   Column{"t_ns", T::kInt64},
    Column{"end_ns", T::kInt64},         Column{"pid", T::kInt32},
    Column{"start_ns", T::kInt64},       Column{"kind", T::kText},
    Column{"domain", T::kInt32}.names(), Column{"function", T::kInt32}.names(),
    Column{"score", T::kReal},           Column{"value", T::kReal},
    Column{"median_ns", T::kReal},
};
inline constexpr std::string_view kByTime[] = {"t_ns"};
inline constexpr Index kAnomalyIndexes[] = {{"anomalies_t", kByTime, 1, kPartitionedSince}};
inline constexpr Table kAnomalies{"anomalies", TableKind::kPlain, kAnomalyColumns, {}, kAnomalyIndexes};

// What a process left allocated when it exited.
inline constexpr Column kLeakColumns[] = {
    Column{"node", T::kInt32}.names(), Column{"t_ns", T::kInt64},   Column{"pid", T::kInt32},
    Column{"start_ns", T::kInt64},     Column{"device", T::kInt32}, Column{"allocations", T::kInt64},
    Column{"bytes", T::kInt64},
};
inline constexpr Index kLeakIndexes[] = {{"leaks_t", kByTime, 1, kPartitionedSince}};
inline constexpr Table kLeaks{"leaks", TableKind::kPlain, kLeakColumns, {}, kLeakIndexes};

// Version 3: each node's clock against the PostgreSQL server's (history/clock_offset.h). A
// SQLite file is written on the node's own clock: the table stays empty there.
inline constexpr Column kNodeClockColumns[] = {
    Column{"node", T::kInt32}.names(),
    Column{"measured_ns", T::kInt64},
    Column{"offset_ns", T::kInt64},
    Column{"uncertainty_ns", T::kInt64},
};
inline constexpr std::string_view kNodeClockKey[] = {"node"};
inline constexpr Table kNodeClocks =
    Table{"node_clocks", TableKind::kPlain, kNodeClockColumns, kNodeClockKey}.added_in(3);

// Version 4: the sums of `functions` that a window's lists read, written beside its rows
// (history/interval_totals.h) so that a busy node's thousands of short processes are not
// added up again at each query. A node's rows are there from its first write by a build
// of this version on (meta `totals_from:NODE`); a window that starts before it is read
// from `functions` (history/window_sql.h).
// A process's calls of every function in an interval (GPU time left out).
inline constexpr auto kProcessTotalColumns = tiered(std::array{
    Column{"pid", T::kInt32},
    Column{"start_ns", T::kInt64},
    Column{"calls", T::kInt64, C::kSum},
    Column{"errors", T::kInt64, C::kSum},
});
inline constexpr std::string_view kProcessTotalKey[] = {"tier", "node", "t_ns", "pid", "start_ns"};
inline constexpr Table kProcessTotals =
    Table{"process_totals", TableKind::kTiered, kProcessTotalColumns, kProcessTotalKey}.added_in(4);

// A node's calls of one function in an interval, every process's together.
inline constexpr auto kFunctionTotalColumns = tiered(kFunctionSumColumns);
inline constexpr std::string_view kFunctionTotalKey[] = {"tier", "node", "t_ns", "domain", "function"};
inline constexpr Table kFunctionTotals =
    Table{"function_totals", TableKind::kTiered, kFunctionTotalColumns, kFunctionTotalKey}.added_in(4);

// Version 8: what a job report reads of each complete hour, written once by the store's
// maintenance when it rolls the hour up (history/job_rollup.h), kept as long as the hour
// rows: each process's GPU rows with their GPU's columns and what all of the GPU's
// processes did together, and each process's calls of the waits and GPU time as plain
// sums (the count and sum of their latency, not the sketch). Rows of tier 2 only: they
// never roll further.
// The columns `names` of `from`, as they are there (a rollup's copies of its sources').
template <std::size_t N, std::size_t M>
constexpr std::array<Column, N> copied(const std::array<Column, M>& from,
                                       const std::array<std::string_view, N>& names) {
  std::array<Column, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    for (const Column& c : from) {
      if (c.name == names[i]) out[i] = c;
    }
  }
  return out;
}
inline constexpr auto kJobGpuColumns = tiered(
    joined(joined(joined(kGpuProcessValues,
                         std::array{
                             Column{"gpu_processes", T::kInt64, C::kMax},
                             Column{"gpu_processes_with_sm", T::kInt64, C::kMax},
                             Column{"gpu_sm_sum", T::kReal, C::kMax}.nullable(),
                             Column{"gpu_samples", T::kInt64, C::kMax}.nullable(),
                         }),
                  copied(kGpuColumns,
                         std::array<std::string_view, 7>{"util_mean", "sm_active_mean", "tensor_active_mean",
                                                         "memory_total", "power_mean_w", "energy_mj",
                                                         "energy_counter_ns"})),
           kGpuProcessShare));
inline constexpr Table kJobGpus =
    Table{"job_gpus", TableKind::kTiered, kJobGpuColumns, kGpuProcessKey}.added_in(8).rows_replaced();

inline constexpr auto kJobCallColumns = tiered(
    joined(copied(kFunctionColumns, std::array<std::string_view, 7>{"pid", "start_ns", "domain", "function",
                                                                    "calls", "timed", "estimated"}),
           std::array{
               Column{"latency_count", T::kInt64, C::kSum},
               Column{"latency_sum_ns", T::kInt64, C::kSum},
           }));
inline constexpr Table kJobCalls =
    Table{"job_calls", TableKind::kTiered, kJobCallColumns, kFunctionKey}.added_in(8).rows_replaced();

// Version 9: where each rank of each NCCL communicator stands on each node
// (analysis/nccl_progress.h), one row per (node, comm_id, rank) that the node's agent
// replaces while the rank runs (each second while a rank of the communicator waits, else
// each interval), so that every agent of a job can name the rank another node's ranks
// wait for (analysis/job_verdict.h). `written_ns` is on the store's clock (PostgreSQL:
// the server's); a node's write drops its rows of ranks gone, maintain() those of agents
// that stopped writing. `comm_id` holds the id's 64 bits as a signed integer.
inline constexpr Column kNcclStandingColumns[] = {
    Column{"node", T::kInt32}.names(),
    Column{"comm_id", T::kInt64},
    Column{"rank", T::kInt32},
    Column{"pid", T::kInt32},
    Column{"nranks", T::kInt32},
    Column{"entered", T::kInt64},
    Column{"finished", T::kInt64},
    Column{"waiting_ns", T::kInt64},
    Column{"collective", T::kText}.defaults("''"),
    Column{"written_ns", T::kInt64},
    // Version 12: the rank's kept starts (analysis/nccl_skew.h NcclArrival) as "KIND:SEQ:TS"
    // separated by spaces, TS on the store's clock, and the bound of the writer's offset
    // that put them there (-1: not measured), for stragglers across nodes.
    Column{"arrivals", T::kText}.defaults("''").added_in(12),
    Column{"clock_uncertainty_ns", T::kInt64}.defaults("-1").added_in(12),
};
inline constexpr std::string_view kNcclStandingKey[] = {"node", "comm_id", "rank"};
inline constexpr std::string_view kByComm[] = {"comm_id"};
inline constexpr Index kNcclStandingIndexes[] = {{"nccl_standings_comm", kByComm, 9}};
inline constexpr Table kNcclStandings =
    Table{"nccl_standings", TableKind::kPlain, kNcclStandingColumns, kNcclStandingKey, kNcclStandingIndexes}
        .added_in(9)
        .rows_replaced();

// Version 10: each node's agent, one row per node that its fleet link (history/fleet_link.h)
// writes at its start and once per interval (its heartbeat): where its API answers
// (`url`, [serve] advertise_url or its listen address), its build's version, when it
// started and when it was last seen (both on the store's clock: PostgreSQL's server's),
// and how often it writes (`every_ns`): an agent not seen for three of those is down.
// maintain() deletes the rows of agents gone longer than the hour rows are kept.
inline constexpr Column kAgentColumns[] = {
    Column{"node", T::kInt32}.names(),          Column{"url", T::kText}.defaults("''"),
    Column{"version", T::kText}.defaults("''"), Column{"started_ns", T::kInt64},
    Column{"last_seen_ns", T::kInt64},          Column{"every_ns", T::kInt64},
};
inline constexpr std::string_view kAgentKey[] = {"node"};
inline constexpr Table kAgents =
    Table{"agents", TableKind::kPlain, kAgentColumns, kAgentKey}.added_in(10).rows_replaced();

// Version 11: the namespace report's rollup (history/namespace_rollup.h), made with the job
// rollups from job_gpus and the processes' namespaces and jobs: per hour, node, namespace,
// job and GPU, what the job's processes on the GPU held together (their count, SM shares,
// memory, the parts of the hour held, held idle and of its energy), beside the GPU's
// columns, so that a namespace's report over weeks reads one row per job's GPU-hour. Rows
// of tier 2 only; PostgreSQL fills it (a SQLite store keeps it empty).
inline constexpr auto kNamespaceGpuColumns = tiered(std::array{
    Column{"namespace", T::kText},
    Column{"job", T::kText},
    Column{"gpu", T::kInt32},
    Column{"processes", T::kInt64, C::kSum},
    Column{"sm_sum", T::kReal, C::kSum},
    Column{"memory", T::kInt64, C::kSum},
    Column{"held", T::kReal, C::kMax},
    Column{"idle", T::kReal, C::kMax}.nullable(),
    Column{"energy_part", T::kReal, C::kMax},
    Column{"gpu_processes", T::kInt64, C::kMax},
    Column{"gpu_processes_with_sm", T::kInt64, C::kMax},
    Column{"gpu_sm_sum", T::kReal, C::kMax}.nullable(),
    Column{"util_mean", T::kReal, C::kMax}.nullable(),
    Column{"sm_active_mean", T::kReal, C::kMax}.nullable(),
    Column{"tensor_active_mean", T::kReal, C::kMax}.nullable(),
    Column{"memory_total", T::kInt64, C::kMax}.nullable(),
    Column{"power_mean_w", T::kReal, C::kMax}.nullable(),
    Column{"energy_mj", T::kReal, C::kMax}.nullable(),
    Column{"energy_counter_ns", T::kInt64, C::kMax}.nullable(),
    // Version 13: the job's processes' shares of the hour's power over the GPU's (their
    // power_share_w over its power over all passes); none where a row had no share.
    Column{"energy_share", T::kReal, C::kSum}.nullable().added_in(13),
});
inline constexpr std::string_view kNamespaceGpuKey[] = {"tier", "node", "t_ns", "namespace", "job", "gpu"};
inline constexpr Table kNamespaceGpus =
    Table{"namespace_gpus", TableKind::kTiered, kNamespaceGpuColumns, kNamespaceGpuKey}
        .added_in(11)
        .rows_replaced()
        .made_by_fleet_store();

// Version 14: the fleet's rollup of calls per job (history/job_functions_rollup.h), made
// with the job rollups from the hour rows of functions and the processes' jobs: per hour,
// node, job and function, the job's processes that called it, their calls and errors; and
// per hour, node and job a row of domain and function 0 with the job's processes that made
// any call and all their calls and errors (GPU time's launches not among them), so that the
// fleet dashboard's month reads one narrow row per job and function-hour, not one with a
// latency sketch per process. `job` is the processes' job id, '' for none. Rows of tier 2
// only; PostgreSQL fills it (a SQLite store keeps it empty).
inline constexpr auto kJobFunctionColumns = tiered(std::array{
    Column{"job", T::kText},
    Column{"domain", T::kInt32},  // an id into names, 0 for the job's row
    Column{"function", T::kInt32},
    Column{"processes", T::kInt64, C::kSum},
    Column{"calls", T::kInt64, C::kSum},
    Column{"errors", T::kInt64, C::kSum},
});
inline constexpr std::string_view kJobFunctionKey[] = {"tier", "node", "t_ns", "job", "domain", "function"};
inline constexpr Table kJobFunctions =
    Table{"job_functions", TableKind::kTiered, kJobFunctionColumns, kJobFunctionKey}
        .added_in(14)
        .rows_replaced()
        .made_by_fleet_store();

// Every table, in the order the steps make them.
inline constexpr const Table* kAll[] = {&kMeta,           &kNames,         &kProcesses,   &kIntervals,
                                        &kFunctions,      &kKernels,       &kGpus,        &kGpuProcesses,
                                        &kAnomalies,      &kLeaks,         &kNodeClocks,  &kProcessTotals,
                                        &kFunctionTotals, &kJobGpus,       &kJobCalls,    &kNcclStandings,
                                        &kAgents,         &kNamespaceGpus, &kJobFunctions};

}  // namespace tables
}  // namespace eacgm::history
