// [trace]'s keys, their ranges, and the rules between them (the ring buffer's size and
// the wakeup threshold).
#include "ingest/trace_config.h"

#include <string_view>

#include "core/config_reader.h"

namespace eacgm::ingest {
namespace {

constexpr std::string_view kTraceKeys[] = {
    "ringbuf_mib", "wakeup_kib",   "poll_timeout_ms", "rescan_interval_s", "status_interval_s",
    "mode",        "sample_shift", "budget",          "calibrate",         "pinned",
    "host_waits",  "duty_cycle",   "one_layer",       "duty_fraction",     "duty_switch_log",
    "duty_log",    "cgroup",       "count_keys"};

bool is_power_of_two(std::uint32_t v) { return v > 0 && (v & (v - 1)) == 0; }

// pinned: distinct, non-empty function or spec names.
Status read_pinned(const ConfigTable& table, std::vector<std::string>& out) {
  auto node = table.get("pinned");
  if (!node) return {};
  auto items = node->items();
  if (!items) {
    return node->fail(
        table.context(),
        {"pinned must be an array of probe names such as [\"cuLaunchKernel\"], not ", node->type_name()});
  }
  for (const ConfigValue& item : *items) {
    const std::string* s = item.string();
    if (s == nullptr || s->empty()) {
      return item.fail(table.context(),
                       "pinned entries must be non-empty probe names such as \"cuLaunchKernel\"");
    }
    for (const std::string& earlier : out) {
      if (earlier == *s) return item.fail(table.context(), {"probe \"", *s, "\" is pinned twice"});
    }
    out.push_back(*s);
  }
  return {};
}

// The always-on settings: mode, sampling, the budget and its duty cycle.
Status read_always_on(const ConfigTable& table, TraceConfig& trace) {
  if (auto m = table.get("mode")) {
    const std::string* text = m->string();
    const auto mode = text != nullptr ? parse_trace_mode(*text) : std::nullopt;
    if (!mode) return table.fail_at("mode", "mode must be \"per-call\" or \"always-on\" (docs/overhead.md)");
    trace.mode = *mode;
  }
  if (auto s = table.read_integer("sample_shift", 0, 20, trace.sample_shift); !s) return s;
  if (auto s = table.read_number("budget", 0.0, 1.0, trace.budget); !s) return s;
  if (auto s = table.read_bool("calibrate", trace.calibrate); !s) return s;
  if (auto s = table.read_bool("duty_cycle", trace.duty_cycle); !s) return s;
  if (table.contains("duty_fraction")) {
    double fraction = 0;
    if (auto s = table.read_number("duty_fraction", fraction); !s) return s;
    // Written as !(in range) so NaN fails too; at 0 the probes would never count.
    if (!(fraction > 0.0 && fraction <= 1.0)) {
      return table.out_of_range("duty_fraction", fraction, "use a fraction in (0, 1], such as 0.5");
    }
    trace.duty_fraction = fraction;
  }
  if (auto s = table.read_string("duty_switch_log", trace.duty_switch_log); !s) return s;
  if (auto s = table.read_string("duty_log", trace.duty_log); !s) return s;
  if (auto s = table.read_bool("one_layer", trace.one_layer); !s) return s;
  if (auto s = read_pinned(table, trace.pinned); !s) return s;
  if (table.contains("host_waits")) {
    bool on = true;
    if (auto s = table.read_bool("host_waits", on); !s) return s;
    trace.host_waits = on;
  }
  return {};
}

// The session's own settings: the ring buffer, wakeups, rescans and status lines.
Status read_session(const ConfigTable& table, TraceConfig& trace) {
  if (auto s = table.read_string("cgroup", trace.cgroup); !s) return s;
  if (auto s = table.read_integer("ringbuf_mib", 1, 1024, trace.ringbuf_mib); !s) return s;
  // The kernel requires the BPF ring buffer size to be a power-of-two number of pages.
  if (!is_power_of_two(trace.ringbuf_mib)) {
    return table.fail_at("ringbuf_mib", {"ringbuf_mib = ", std::to_string(trace.ringbuf_mib),
                                         " is not a power of two (use 1, 2, 4, ... 1024)"});
  }
  if (auto s = table.read_integer("wakeup_kib", 0, INT64_MAX, trace.wakeup_kib); !s) return s;
  // Waking the reader only after more than half the buffer is queued leaves too
  // little room for the records that arrive while it drains.
  const std::uint32_t max_wakeup = trace.ringbuf_mib * 1024 / 2;
  if (trace.wakeup_kib > max_wakeup) {
    return table.fail_at(
        "wakeup_kib",
        {"wakeup_kib = ", std::to_string(trace.wakeup_kib),
         " exceeds half the ring buffer (ringbuf_mib = ", std::to_string(trace.ringbuf_mib),
         " allows at most ", std::to_string(max_wakeup), "); lower wakeup_kib or raise ringbuf_mib"});
  }
  if (auto s = table.read_integer("poll_timeout_ms", 1, 10000, trace.poll_timeout_ms); !s) return s;
  if (auto s = table.read_integer("count_keys", 16, 1 << 22, trace.count_keys); !s) return s;
  if (auto s = table.read_number("rescan_interval_s", 0.05, 3600, trace.rescan_interval_s); !s) return s;
  if (auto s = table.read_number("status_interval_s", trace.status_interval_s); !s) return s;
  if (table.contains("status_interval_s") && trace.status_interval_s != 0.0 &&
      !(trace.status_interval_s >= 0.1 && trace.status_interval_s <= 3600)) {
    return table.out_of_range("status_interval_s", trace.status_interval_s, "use 0 (off) or 0.1..3600");
  }
  return {};
}

Status read_trace(const ConfigTable& table, TraceConfig& trace) {
  if (auto s = table.check_keys(kTraceKeys); !s) return s;
  if (auto s = read_always_on(table, trace); !s) return s;
  return read_session(table, trace);
}

}  // namespace

void add_trace_section(ConfigSections& sections, TraceConfig& trace) {
  sections.add_table<read_trace>("trace", trace);
}

}  // namespace eacgm::ingest
