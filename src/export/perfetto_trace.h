// PerfettoTrace: the trace as a timeline in the Chrome/Perfetto JSON Trace Event Format
// (ui.perfetto.dev, chrome://tracing), one event per line, written as the trace runs.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "core/clock.h"
#include "core/consumer.h"
#include "export/line_output.h"

namespace eacgm::exporting {

// How many processes and threads get names (metadata events): what a long trace of
// short-lived processes sees past them is written unnamed and counted.
struct PerfettoNameLimits {
  std::size_t processes = 16384;
  std::size_t threads = 65536;
};

class PerfettoTrace final : public Consumer {
 public:
  // The pseudo-process that holds the GPUs' counter tracks: Linux gives pids below
  // PID_MAX_LIMIT (2^22 on 64-bit), so this one never meets a traced process.
  static constexpr std::uint32_t kGpuPid = 1u << 22;

  using NameLimits = PerfettoNameLimits;

  // Writes the opening at once. `max_bytes` and `on_limit` as for EventStream: whole
  // events up to the limit, the closing `]}` included, then nothing more; 0: no limit.
  PerfettoTrace(FILE* out, std::uint64_t max_bytes = 0,
                std::function<void(std::uint64_t max_bytes)> on_limit = {}, NameLimits limits = {});

  void on_calls(std::span<const CallEvent> calls) override;
  void on_gpu(const GpuSnapshot& snapshot) override;
  // Spans the hooks timed on the GPU: a slice on a track per (device, stream) of the
  // "GPU n" pseudo-process, and an `ac2g` flow from the launch (a slice on the launching
  // thread) to it, as Kineto draws them.
  void on_gpu_time(const GpuTimeBatch& batch) override;
  void flush() override;
  // Writes the closing `]}` (once), so that a finished trace is one valid JSON object.
  void on_end(const CounterValues& counters) override;

  // What was written, left out at the size limit (whole events) and failed to write.
  const LineOutput& output() const { return output_; }
  LineOutput& output() { return output_; }
  // Calls written on threads that got no name because the name limits were reached.
  std::uint64_t calls_unnamed() const { return calls_unnamed_; }

 private:
  // Starts one event line (the comma that separates it from the previous one).
  void begin_event();
  // Names the call's process and thread the first time they are seen; false when the
  // limits left either unnamed.
  bool name_call_thread(const CallEvent& e);
  void put_name(std::string_view what, std::uint32_t pid, const std::uint32_t* tid, std::string_view name);
  void put_call(const CallEvent& e);

  LineOutput output_;
  NameLimits limits_;
  fmt::memory_buffer buf_;
  bool any_event_ = false;
  bool ended_ = false;
  // pid → named from its main thread (tid == pid); a process first seen from another
  // thread is named again by its main thread's name when that one shows up.
  std::unordered_map<std::uint32_t, bool> processes_;
  std::unordered_set<std::uint64_t> threads_;  // pid << 32 | tid
  // Calls come in runs of one thread: the last one's key and whether it was named.
  std::uint64_t last_thread_ = ~std::uint64_t{0};
  bool last_thread_named_ = false;
  bool gpus_named_ = false;
  std::uint64_t calls_unnamed_ = 0;
  // GPU time: kernel names by (pid, function) (bounded), named GPU tracks, flow ids.
  std::unordered_map<std::uint64_t, std::string> gpu_names_;
  std::unordered_set<std::uint64_t> gpu_tracks_;
  std::uint64_t next_flow_ = 1;
  WallClock wall_;
};

}  // namespace eacgm::exporting
