// GpuWorkStats: the GPU work traced processes issued, as one figure per (process,
// stream, kind, name, direction): kernels launched, memsets, copies, whichever API layer
// issued them (a runtime call's nested driver call is the same operation, counted once),
// plus the kernels, memsets and copies each CUDA graph launch executed (marked graph
// work, at the launch's stream). Work recorded into a graph by stream capture is counted
// when the graph is launched, not when recorded. Bounded in rows and in exited processes:
// the rows of a process found gone stay until kMaxExited processes exited after it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "analysis/exit_order.h"
#include "analysis/unnamed_launches.h"
#include "core/call_counts.h"
#include "core/call_event.h"
#include "core/work_rule.h"

namespace eacgm::analysis {

struct GpuWorkRow {
  std::uint32_t pid = 0;
  std::string comm;
  std::uint64_t stream = 0;
  GpuWork kind = GpuWork::kNone;  // kKernel, kMemset or kCopy
  std::string name;               // kernels: the kernel's name ("" when unknown)
  std::string direction;          // copies
  std::uint64_t count = 0;        // operations issued (graph work included)
  std::uint64_t graph = 0;        // of which executed by graph launches
  std::uint64_t errors = 0;       // calls that returned an error (not counted as graph work)
  std::uint64_t bytes = 0;        // memsets and copies whose size was read
};

// "kernel", "memset", "copy".
std::string_view gpu_work_kind_name(GpuWork kind);

class GpuWorkStats {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxExited = 1024;
  struct Options {
    std::size_t max_rows = 20000;
    std::size_t max_exited = kMaxExited;  // exited processes whose rows are kept
  };
  GpuWorkStats() : GpuWorkStats(Options{}) {}
  explicit GpuWorkStats(const Options& options) : options_(options) {}

  void add(const CallEvent& event);
  // Operations counted in the kernel (always-on): per process, stream and kernel; errors
  // are not known per call there. Launches counted before their handle was named move to
  // the name's row once a count brings it.
  void add(const CallCount& count);
  // Most operations first, then by pid, stream, kind, name.
  std::vector<GpuWorkRow> rows() const;
  // Operations past max_rows (only counted).
  std::uint64_t folded() const { return folded_; }
  // Totals per kind over every row (and the folded operations' kinds).
  std::uint64_t total(GpuWork kind) const;
  // Graph launches whose graph's contents are not known (made before tracing began, or
  // past the per-process cap): launched, their work in no row.
  std::uint64_t unknown_graph_launches() const { return unknown_graph_launches_; }

  // Checks up to `max_checks` processes with rows (round robin across calls) with
  // `is_alive`; one gone for `grace` has exited, and past max_exited exited processes the
  // rows of the one that exited first go: its operations stay in the totals.
  void sweep(Clock::time_point now, const std::function<bool(std::uint32_t)>& is_alive,
             std::size_t max_checks, Clock::duration grace);
  std::size_t process_count() const { return processes_.size(); }
  std::size_t row_count() const { return rows_.size(); }
  // Exited processes whose rows went to keep max_exited.
  std::uint64_t exited_dropped() const { return exits_.dropped(); }

 private:
  struct Process {
    ExitMark exit;
  };
  using Key = std::tuple<std::uint32_t, std::uint64_t, GpuWork, std::string, std::string>;
  void count(std::uint32_t pid, std::string_view comm, std::uint64_t stream, GpuWork kind,
             const std::string& name, const std::string& direction, std::uint64_t n, std::uint64_t graph_n,
             bool error, std::uint64_t bytes);
  const WorkRule& rule(const CallEvent& event);
  // Moves `n` launches of (pid, stream) from the unnamed kernel row to `name`'s.
  void name_late(std::uint32_t pid, std::uint64_t stream, const std::string& direction,
                 const std::string& name, std::uint64_t n);

  Options options_;
  std::map<Key, GpuWorkRow> rows_;
  std::unordered_map<const ProbeInfo*, WorkRule> rules_;
  std::vector<std::shared_ptr<const ProbeInfo>> pinned_;
  WorkRule scratch_;
  std::uint64_t folded_ = 0;
  std::uint64_t unknown_graph_launches_ = 0;
  std::map<GpuWork, std::uint64_t> totals_;
  UnnamedLaunches unnamed_;
  std::map<std::uint32_t, Process> processes_;  // those with rows
  ExitOrder exits_;
};

}  // namespace eacgm::analysis
