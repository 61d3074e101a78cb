// `eacgm top`'s model and its rendering: what the agent's API said at each refresh
// (GPUs with a short history, processes with their rates) and a pure function from that
// model and the view's state (sort, filter, grouping, selection) to the screen's lines,
// so that what `top` shows is tested without a terminal (cli/cmd_top.cpp draws them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace eacgm::cli {

struct TopGpu {
  unsigned index = 0;
  std::string name;
  std::optional<double> util_percent;
  // NVML GPM's SM and tensor activity (ratios 0..1) of the last pass: how much of the GPU
  // computed, where utilization says only that a kernel ran. Absent without GPM.
  std::optional<double> sm_active, tensor_active;
  std::optional<std::uint64_t> memory_used_bytes, memory_total_bytes;
  std::deque<double> util_history;  // oldest first, at most kHistory
  static constexpr std::size_t kHistory = 30;
};

struct TopProcess {
  std::uint32_t pid = 0;
  std::string comm;
  std::optional<long> rank;
  std::uint64_t calls = 0;
  double unchanged_s = 0;  // since its total last moved (the agent's snapshots come once a second)
  double calls_per_s = 0;
  double kernels_per_s = 0;            // GPU work items launched per second (calls of launch functions)
  std::uint64_t gpu_memory_bytes = 0;  // the most NVML saw on any GPU
  std::uint64_t anomalies = 0;         // the detector's recent slow calls of this process
  std::string last_anomaly;            // "cuStreamSynchronize 12.3 ms"
};

struct TopModel {
  std::vector<TopGpu> gpus;
  std::vector<TopProcess> processes;
  std::vector<std::pair<std::string, std::uint64_t>> top_functions;  // the node's, most calls first
  std::string status;  // the last message (a capture written...)
  std::string source;  // "" a running agent; else what is read instead ("own probes")
};

enum class TopSort : std::uint8_t { kGpuMemory, kCallsPerSecond, kKernelsPerSecond };

struct TopViewState {
  TopSort sort = TopSort::kGpuMemory;
  std::string filter;  // substring of comm or pid; "" none
  bool group_by_rank = false;
  std::size_t selected = 0;  // index into the visible rows
};

// The processes as shown: filtered, grouped (by rank, then the sort), sorted.
std::vector<TopProcess> visible_processes(const TopModel& model, const TopViewState& view);

// The screen: `height` lines of at most `width` characters.
std::vector<std::string> render_top(const TopModel& model, const TopViewState& view, std::size_t width,
                                    std::size_t height);

// New readings into the model: the rates from the previous model's totals over `dt_s`.
// `processes_json`, `gpus_json`, `functions_json`, `anomalies_json`: the API's documents.
void update_top_model(TopModel& model, const std::string& processes_json, const std::string& gpus_json,
                      const std::string& functions_json, const std::string& anomalies_json, double dt_s);

const char* sort_name(TopSort sort);

}  // namespace eacgm::cli
