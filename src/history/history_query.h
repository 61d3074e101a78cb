// What is asked of a history and what it answers: a window of time (and filters), then
// rows summed over it (functions with their merged latency sketch, processes, kernels)
// or points on a step (GPUs), and the anomalies and leaks in it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "history/clock_offset.h"
#include "history/history_batch.h"

namespace eacgm::history {

// The most rows one page of a list holds.
inline constexpr std::size_t kMaxPageRows = 10000;

struct HistoryQuery {
  std::int64_t from_ns = 0;
  std::int64_t to_ns = 0;                 // exclusive
  std::optional<std::string> node;        // nullopt: every node
  std::optional<std::uint32_t> pid;       // a process (every start of that pid)
  std::optional<std::string> comm;        // processes of that name
  std::int64_t step_ns = 60'000'000'000;  // GPU points
  // The page of a list (processes, jobs, nodes, anomalies, leaks): `limit` rows from the
  // `offset`th on, in the list's order.
  std::size_t offset = 0;
  std::size_t limit = kMaxPageRows;
};

// A page of a list and how many rows the whole window has.
template <class Row>
struct Page {
  std::vector<Row> rows;
  std::uint64_t total = 0;
};

struct StoredProcess {
  std::string node;
  ProcessRecord record;
  std::uint64_t calls = 0;  // in the window
  std::uint64_t errors = 0;
};

// The processes of a window together (every page's).
struct ProcessTotals {
  std::uint64_t processes = 0;
  std::uint64_t running = 0;
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
};

// A page of processes, most calls first.
struct ProcessPage {
  std::vector<StoredProcess> rows;
  ProcessTotals totals;  // totals.processes: the window's count
};

// A batch job (SLURM_JOB_ID, torchrun's run id) over a window: the processes that carried
// it, gathered across nodes.
struct StoredJob {
  std::string job;
  std::vector<std::string> nodes;  // sorted
  std::vector<long> ranks;         // sorted, each once
  std::optional<long> world_size;  // the largest any of its processes said
  std::vector<std::string> pods;   // "namespace/pod", sorted
  std::uint64_t processes = 0;
  std::uint64_t running = 0;
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
  std::int64_t first_ns = 0;
  std::int64_t last_ns = 0;
};

// A node over a window: its processes together.
struct StoredNode {
  std::string node;
  std::uint64_t processes = 0;
  std::uint64_t running = 0;
  std::uint64_t jobs = 0;
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
  std::int64_t last_ns = 0;
};

// A node's agent as its fleet link last wrote it (schema version 10, `agents`); times on
// the store's clock.
struct StoredAgent {
  std::string node;
  std::string url;      // where its API answers
  std::string version;  // its build's
  std::int64_t started_ns = 0;
  std::int64_t last_seen_ns = 0;
  std::int64_t every_ns = 0;  // its heartbeat's period
};

// Every node's agent, and the store's clock when they were read.
struct AgentList {
  std::int64_t now_ns = 0;
  std::vector<StoredAgent> rows;  // by node
};

// A node's clock against the store's as the node's last write measured it (node_clocks,
// PostgreSQL only): the store's clock minus the node's is estimate.offset_ns.
struct NodeClock {
  std::string node;
  ClockEstimate estimate;
};

// What a store keeps of a node: whether the node's rows are there at all (it wrote or
// shipped there), and whether they come rolled up only (a node that ships its minute and
// hour rows to a fleet store and keeps its raw intervals to itself: `shipped_to:`).
struct NodeKeeping {
  bool written = false;
  bool rollups_only = false;
};

// An agent is up while it was seen within three of its heartbeats (and no later than now:
// a row from the future, a clock gone wrong, still counts as seen).
inline bool agent_up(const StoredAgent& a, std::int64_t now_ns) {
  return now_ns - a.last_seen_ns <= 3 * a.every_ns;
}

struct StoredFunction {
  std::string domain;
  std::string function;
  std::uint64_t calls = 0, errors = 0, bytes = 0, timed = 0, estimated = 0;
  double calls_variance = 0;
  StoredSketch latency;
};

struct StoredKernel {
  std::string kernel;
  std::uint64_t launches = 0;
};

struct StoredGpuPoint {
  std::string node;
  std::uint32_t gpu = 0;
  std::string uuid;
  std::string name;
  std::int64_t t_ns = 0;  // the step's start
  std::optional<double> util_mean;
  std::optional<std::uint32_t> util_max;
  std::optional<double> memory_used_mean;
  std::optional<std::uint64_t> memory_used_max;
  std::optional<std::uint64_t> memory_total;
  std::optional<double> power_mean_w;
  std::optional<double> power_max_w;
  std::optional<std::uint32_t> temperature_max;
  // NVML GPM's activities (ratios 0..1); absent without GPM.
  std::optional<double> sm_active_mean, sm_active_max;
  std::optional<double> tensor_active_mean, tensor_active_max;
  std::optional<double> dram_active_mean, dram_active_max;
  std::optional<double> energy_mj;  // over the step (history_batch.h's GpuRecord)
  std::optional<std::int64_t> energy_counter_ns;
};

struct StoredAnomaly {
  std::string node;
  AnomalyRecord record;
};

struct StoredLeak {
  std::string node;
  std::int64_t t_ns = 0;
  std::string comm;
  LeakRecord record;
};

// The resolution a window was answered at: raw intervals, minute or hour rollups.
enum class Tier { kRaw = 0, kMinute = 1, kHour = 2 };
const char* tier_name(Tier tier);

}  // namespace eacgm::history
