// Writes a capture through PerfettoTrace (the calls, GPU counters and names), then adds
// the instants and the capture's own description (export/capture_trace.h).
#include "export/capture_trace.h"

#include <stdio.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string_view>

#include "export/json_text.h"
#include "export/perfetto_trace.h"
#include "export/python_stack_text.h"

namespace eacgm::exporting {
namespace {

using json = nlohmann::json;

double to_us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

// The calls, GPU passes and names as PerfettoTrace writes them, without the closing `]}`.
std::string perfetto_events(const CapturedWindow& w) {
  char* data = nullptr;
  std::size_t size = 0;
  FILE* out = open_memstream(&data, &size);
  if (out == nullptr) return {};
  {
    PerfettoTrace trace(out);
    // Calls arrive as their returns came; sorted by start (outer before inner at one
    // start), a thread's calls open and close in order, as slices nest.
    std::vector<const CallEvent*> order;
    order.reserve(w.calls.size());
    for (const auto& c : w.calls) order.push_back(&c);
    std::stable_sort(order.begin(), order.end(), [](const CallEvent* a, const CallEvent* b) {
      if (a->ts_ns != b->ts_ns) return a->ts_ns < b->ts_ns;
      return a->dur_ns > b->dur_ns;
    });
    std::vector<CallEvent> run;
    run.reserve(std::min<std::size_t>(order.size(), 4096));
    for (const CallEvent* c : order) {
      run.push_back(*c);
      if (run.size() == 4096) {
        trace.on_calls(run);
        run.clear();
      }
    }
    if (!run.empty()) trace.on_calls(run);
    for (const auto& g : w.gpus) trace.on_gpu(g);
    trace.on_end({});
  }
  std::fclose(out);
  std::string text(data, size);
  std::free(data);
  // Drop the closing `]}` (and its newline): the instants and the description follow.
  const auto close = text.rfind("]}");
  if (close != std::string::npos) text.resize(close);
  return text;
}

json python_sample(const PythonStack& s, std::uint64_t wall_offset_ns) {
  json frames = python_stack_frames(s);
  const std::string top =
      frames.empty() ? std::string("(no Python frame)") : frames.front().get<std::string>();
  return json{{"ph", "i"},
              {"s", "t"},
              {"name", top},
              {"cat", "python_sample"},
              {"ts", to_us(s.ts_ns + wall_offset_ns)},
              {"pid", s.pid},
              {"tid", s.tid},
              {"args", {{"stack", std::move(frames)}, {"truncated", s.truncated}}}};
}

}  // namespace

std::string capture_trace_json(const CapturedWindow& w, const std::vector<analysis::Anomaly>& anomalies,
                               const CaptureControl::Limits& limits) {
  std::string text = perfetto_events(w);
  bool has_events = text.find("{\"ph\"") != std::string::npos;
  auto add = [&](const json& event) {
    if (has_events) text += ',';
    text += event.dump();
    text += '\n';
    has_events = true;
  };
  const std::string comm = w.comm.empty() ? "pid " + std::to_string(w.pid) : w.comm;
  // Kineto's track conventions: the captured process first, labelled.
  add({{"ph", "M"}, {"name", "process_name"}, {"pid", w.pid}, {"args", {{"name", comm}}}});
  add({{"ph", "M"}, {"name", "process_labels"}, {"pid", w.pid}, {"args", {{"labels", "captured"}}}});
  add({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", w.pid}, {"args", {{"sort_index", 0}}}});
  const std::uint64_t begin = w.begin_ns + w.wall_offset_ns;
  const std::uint64_t end = w.end_ns + w.wall_offset_ns;
  add({{"ph", "i"},
       {"s", "p"},
       {"name", "capture begins"},
       {"cat", "capture"},
       {"ts", to_us(begin)},
       {"pid", w.pid}});
  add({{"ph", "i"},
       {"s", "p"},
       {"name", "capture ends"},
       {"cat", "capture"},
       {"ts", to_us(end)},
       {"pid", w.pid}});
  std::size_t anomalies_written = 0;
  for (const auto& a : anomalies) {
    if (a.pid != w.pid || a.ts_ns < begin || a.ts_ns > end) continue;
    json args{{"domain", a.domain}, {"dur_ns", a.dur_ns}, {"median_ns", a.median_ns},
              {"score", a.score},   {"op", a.op},         {"sampled", a.sampled}};
    if (a.run_delay_ns > 0) args["run_delay_ns"] = a.run_delay_ns;
    add({{"ph", "i"},
         {"s", "t"},
         {"name", "anomaly: " + a.name},
         {"cat", "anomaly"},
         {"ts", to_us(a.ts_ns)},
         {"pid", a.pid},
         {"tid", a.tid},
         {"args", std::move(args)}});
    ++anomalies_written;
  }
  for (const auto& s : w.stacks) add(python_sample(s, w.wall_offset_ns));
  const bool truncated = w.calls_left_out > 0 || w.stacks_left_out > 0;
  if (truncated) {
    add({{"ph", "i"},
         {"s", "g"},
         {"name", "capture truncated: " + std::to_string(w.calls_left_out) + " calls left out"},
         {"cat", "capture"},
         {"ts", to_us(end)},
         {"pid", w.pid}});
  }
  const json description{{"pid", w.pid},
                         {"comm", w.comm},
                         {"clock", "ts: Unix-epoch microseconds; *_ns: CLOCK_MONOTONIC nanoseconds"},
                         {"wall_offset_ns", w.wall_offset_ns},
                         {"begin_ns", w.begin_ns},
                         {"armed_ns", w.armed_ns},
                         {"disarming_ns", w.disarming_ns},
                         {"end_ns", w.end_ns},
                         {"calls", w.calls.size()},
                         {"gpu_passes", w.gpus.size()},
                         {"python_samples", w.stacks.size()},
                         {"anomalies", anomalies_written},
                         {"truncated", truncated},
                         {"calls_left_out", w.calls_left_out},
                         {"python_samples_left_out", w.stacks_left_out},
                         {"max_calls", limits.max_calls},
                         {"max_python_samples", limits.max_stacks},
                         {"drained", w.drained}};
  text += "],\"eacgm_capture\":";
  text += description.dump();
  text += "}\n";
  return text;
}

}  // namespace eacgm::exporting
