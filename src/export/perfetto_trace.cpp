// Writes calls as complete ('X') or instant ('i') events, names as metadata ('M') and
// GPU samples as counters ('C'); the call's own fields come from the JSON Lines writer.
#include "export/perfetto_trace.h"

#include <array>
#include <chrono>
#include <iterator>
#include <string_view>
#include <utility>

#include "export/event_format.h"
#include "export/json_writer.h"

namespace eacgm::exporting {
namespace {

constexpr std::string_view kOpening = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
constexpr std::string_view kClosing = "]}\n";

// Microseconds with three decimals, from nanoseconds: the format's unit without the
// rounding a floating-point print would add.
void put_us(fmt::memory_buffer& out, std::uint64_t ns) {
  put_uint(out, ns / 1000);
  const auto frac = static_cast<unsigned>(ns % 1000);
  const char digits[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                          static_cast<char>('0' + frac % 10)};
  out.append(digits, digits + 4);
}

}  // namespace

PerfettoTrace::PerfettoTrace(FILE* out, std::uint64_t max_bytes, std::function<void(std::uint64_t)> on_limit,
                             NameLimits limits)
    : output_(out, max_bytes, std::move(on_limit), kClosing.size()), limits_(limits) {
  output_.write_always(kOpening);
}

void PerfettoTrace::begin_event() {
  // The comma opens the next line rather than closing this one, so that a cut between
  // lines (the size limit, a killed eacgm) leaves events that `]}` closes validly.
  if (any_event_) buf_.push_back(',');
  any_event_ = true;
}

void PerfettoTrace::put_name(std::string_view what, std::uint32_t pid, const std::uint32_t* tid,
                             std::string_view name) {
  begin_event();
  put(buf_, "{\"ph\":\"M\",\"name\":\"");
  put(buf_, what);
  put(buf_, "\",\"pid\":");
  put_uint(buf_, pid);
  if (tid != nullptr) {
    put(buf_, ",\"tid\":");
    put_uint(buf_, *tid);
  }
  put(buf_, ",\"args\":{\"name\":");
  put_json_string(buf_, name);
  put(buf_, "}}\n");
}

bool PerfettoTrace::name_call_thread(const CallEvent& e) {
  bool named = true;
  const bool main_thread = e.tid == e.pid;
  if (auto it = processes_.find(e.pid); it == processes_.end()) {
    if (processes_.size() < limits_.processes) {
      processes_.emplace(e.pid, main_thread);
      put_name("process_name", e.pid, nullptr, e.comm_view());
    } else {
      named = false;
    }
  } else if (main_thread && !it->second) {
    it->second = true;
    put_name("process_name", e.pid, nullptr, e.comm_view());
  }
  const std::uint64_t key = std::uint64_t{e.pid} << 32 | e.tid;
  if (!threads_.contains(key)) {
    if (threads_.size() < limits_.threads) {
      threads_.insert(key);
      put_name("thread_name", e.pid, &e.tid, e.comm_view());
    } else {
      named = false;
    }
  }
  return named;
}

void PerfettoTrace::put_call(const CallEvent& e) {
  begin_event();
  // Calls whose return was not seen (entry-only probes, nested calls recorded at their
  // entry) have no duration: an instant on the thread's track.
  put(buf_, e.has_exit ? "{\"ph\":\"X\",\"name\":" : "{\"ph\":\"i\",\"s\":\"t\",\"name\":");
  put_json_string(buf_, e.function());
  put(buf_, ",\"cat\":");
  put_json_string(buf_, e.domain());
  put(buf_, ",\"ts\":");
  put_us(buf_, e.ts_ns);
  if (e.has_exit) {
    put(buf_, ",\"dur\":");
    put_us(buf_, e.dur_ns);
  }
  put(buf_, ",\"pid\":");
  put_uint(buf_, e.pid);
  put(buf_, ",\"tid\":");
  put_uint(buf_, e.tid);
  put(buf_, ",\"args\":{\"args\":");
  append_json_args(buf_, e);
  append_json_markers(buf_, e);
  if (e.has_exit) {
    buf_.push_back(',');
    append_json_result(buf_, e);
  }
  put(buf_, "}}\n");
}

void PerfettoTrace::on_calls(std::span<const CallEvent> calls) {
  if (ended_) return;
  for (const auto& e : calls) {
    const std::uint64_t key = std::uint64_t{e.pid} << 32 | e.tid;
    if (key != last_thread_) {
      last_thread_named_ = name_call_thread(e);
      last_thread_ = key;
    }
    if (!last_thread_named_) ++calls_unnamed_;
    put_call(e);
  }
  if (buf_.size() >= (64u << 10)) flush();
}

void PerfettoTrace::on_gpu(const GpuSnapshot& s) {
  if (ended_) return;
  if (!gpus_named_) {
    put_name("process_name", kGpuPid, nullptr, "GPUs");
    gpus_named_ = true;
  }
  const auto ts = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(s.time.time_since_epoch()).count());
  // One counter event per GPU (and per process on a GPU); Perfetto makes a track of
  // each field ("GPU 0 util_pct").
  auto put_counter = [&](std::uint32_t pid, unsigned gpu, std::span<const UintField> fields) {
    if (fields.empty()) return;
    begin_event();
    put(buf_, "{\"ph\":\"C\",\"name\":\"GPU ");
    put_uint(buf_, gpu);
    put(buf_, "\",\"cat\":\"gpu\",\"ts\":");
    put_us(buf_, ts);
    put(buf_, ",\"pid\":");
    put_uint(buf_, pid);
    put(buf_, ",\"args\":");
    put_uint_object(buf_, fields);
    put(buf_, "}\n");
  };
  std::array<UintField, 6> fields;
  std::size_t n = 0;
  auto add = [&](std::string_view name, const auto& value) {
    if (value) fields[n++] = {name, static_cast<std::uint64_t>(*value)};
  };
  for (const DeviceSample& d : s.devices) {
    n = 0;
    add("util_pct", d.utilization_gpu_percent);
    add("mem_util_pct", d.utilization_memory_percent);
    add("mem_used_bytes", d.memory_used_bytes);
    add("power_mw", d.power_usage_milliwatts);
    add("temp_c", d.temperature_gpu_celsius);
    add("sm_clock_mhz", d.clock_sm_mhz);
    put_counter(kGpuPid, d.index, std::span<const UintField>(fields.data(), n));
  }
  for (const ProcessSample& p : s.processes) {
    // A process on a GPU that made no traced call yet is named by NVML's name for it.
    if (!p.name.empty() && !processes_.contains(p.pid) && processes_.size() < limits_.processes) {
      processes_.emplace(p.pid, true);
      put_name("process_name", p.pid, nullptr, p.name);
    }
    n = 0;
    add("mem_used_bytes", p.used_memory_bytes);
    add("sm_util_pct", p.sm_utilization_percent);
    add("mem_util_pct", p.memory_utilization_percent);
    put_counter(p.pid, p.gpu_index, std::span<const UintField>(fields.data(), n));
  }
}

namespace {

// The function's key among the names: pid and the low bits of the handle (handles are
// heap addresses: distinct within a process in their low 32 bits in practice; a clash only
// misnames a slice).
std::uint64_t function_key(std::uint32_t pid, std::uint64_t function) {
  return std::uint64_t{pid} << 32 ^ (function & 0xffffffffull);
}
constexpr std::size_t kMaxGpuNames = 65536;

}  // namespace

void PerfettoTrace::on_gpu_time(const GpuTimeBatch& batch) {
  if (ended_) return;
  for (const GpuFunctionName& n : batch.names) {
    if (gpu_names_.size() < kMaxGpuNames) gpu_names_[function_key(n.pid, n.function)] = n.name;
  }
  for (const GpuSpan& s : batch.spans) {
    // One pseudo-process per device ("GPU n", above the pids Linux gives), one track per
    // stream in it, named once.
    const std::uint32_t gpu_pid = kGpuPid + 1 + static_cast<std::uint32_t>(s.device < 0 ? 255 : s.device);
    const auto track = static_cast<std::uint32_t>(s.stream & 0x7fffffff);
    const std::uint64_t track_key = std::uint64_t{gpu_pid} << 32 | track;
    if (!gpu_tracks_.contains(track_key) && gpu_tracks_.size() < limits_.threads) {
      if (!processes_.contains(gpu_pid)) {
        processes_.emplace(gpu_pid, true);
        put_name("process_name", gpu_pid, nullptr, fmt::format("GPU {}", s.device));
      }
      gpu_tracks_.insert(track_key);
      put_name("thread_name", gpu_pid, &track, fmt::format("stream {:#x} (pid {})", s.stream, s.pid));
    }
    auto it = gpu_names_.find(function_key(s.pid, s.function));
    const std::string name = it != gpu_names_.end() ? it->second
                             : s.graph              ? fmt::format("graph {:#x}", s.function)
                                                    : fmt::format("kernel {:#x}", s.function);
    const std::uint64_t flow = next_flow_++;
    // The launch on its thread: a 1 us slice at the launch holding the flow's start.
    begin_event();
    put(buf_, "{\"ph\":\"X\",\"name\":\"launch\",\"cat\":\"gpu_launch\",\"ts\":");
    put_us(buf_, wall_.from_monotonic(s.launch_ns));
    put(buf_, ",\"dur\":1.000,\"pid\":");
    put_uint(buf_, s.pid);
    put(buf_, ",\"tid\":");
    put_uint(buf_, s.tid);
    put(buf_, ",\"args\":{\"kernel\":");
    put_json_string(buf_, name);
    put(buf_, "}}\n");
    begin_event();
    put(buf_, "{\"ph\":\"s\",\"name\":\"launch\",\"cat\":\"ac2g\",\"id\":");
    put_uint(buf_, flow);
    put(buf_, ",\"ts\":");
    put_us(buf_, wall_.from_monotonic(s.launch_ns));
    put(buf_, ",\"pid\":");
    put_uint(buf_, s.pid);
    put(buf_, ",\"tid\":");
    put_uint(buf_, s.tid);
    put(buf_, "}\n");
    begin_event();
    put(buf_, "{\"ph\":\"X\",\"name\":");
    put_json_string(buf_, name);
    put(buf_, s.nccl ? ",\"cat\":\"nccl_kernel\",\"ts\":"
                     : (s.graph ? ",\"cat\":\"graph\",\"ts\":" : ",\"cat\":\"kernel\",\"ts\":"));
    put_us(buf_, wall_.from_monotonic(s.start_ns));
    put(buf_, ",\"dur\":");
    put_us(buf_, s.duration_ns);
    put(buf_, ",\"pid\":");
    put_uint(buf_, gpu_pid);
    put(buf_, ",\"tid\":");
    put_uint(buf_, track);
    put(buf_, ",\"args\":{\"device\":");
    put_int(buf_, s.device);
    put(buf_, ",\"stream\":");
    put_json_string(buf_, fmt::format("{:#x}", s.stream));
    put(buf_, ",\"process\":");
    put_uint(buf_, s.pid);
    if (s.shaped) {
      // Kineto's names for a kernel's geometry.
      const gpu_time::LaunchShape& g = s.shape;
      fmt::format_to(std::back_inserter(buf_),
                     ",\"grid\":[{},{},{}],\"block\":[{},{},{}],\"shared memory\":{}", g.grid[0], g.grid[1],
                     g.grid[2], g.block[0], g.block[1], g.block[2], g.shared_bytes);
    }
    put(buf_, s.queued ? ",\"queued\":true}}\n" : ",\"queued\":false}}\n");
    begin_event();
    put(buf_, "{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"launch\",\"cat\":\"ac2g\",\"id\":");
    put_uint(buf_, flow);
    put(buf_, ",\"ts\":");
    put_us(buf_, wall_.from_monotonic(s.start_ns));
    put(buf_, ",\"pid\":");
    put_uint(buf_, gpu_pid);
    put(buf_, ",\"tid\":");
    put_uint(buf_, track);
    put(buf_, "}\n");
  }
  if (buf_.size() >= (64u << 10)) flush();
}

void PerfettoTrace::flush() {
  output_.write_lines(std::string_view(buf_.data(), buf_.size()));
  buf_.clear();
  output_.flush();
}

void PerfettoTrace::on_end(const CounterValues&) {
  if (ended_) return;
  flush();
  output_.write_always(kClosing);
  output_.flush();
  ended_ = true;
}

}  // namespace eacgm::exporting
