// The model's update from the API's documents and its rendering (cli/top_view.h).
#include "cli/top_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "export/text_columns.h"

namespace eacgm::cli {
namespace {

using json = nlohmann::json;

std::string bytes_text(std::uint64_t b) {
  if (b >= (1ull << 30)) return fmt::format("{:.1f}G", static_cast<double>(b) / (1ull << 30));
  if (b >= (1ull << 20)) return fmt::format("{:.0f}M", static_cast<double>(b) / (1ull << 20));
  if (b >= (1ull << 10)) return fmt::format("{:.0f}K", static_cast<double>(b) / (1ull << 10));
  return fmt::format("{}B", b);
}

std::string bar(double percent, std::size_t width) {
  const auto full = static_cast<std::size_t>(
      std::lround(std::clamp(percent, 0.0, 100.0) / 100.0 * static_cast<double>(width)));
  return "[" + std::string(full, '|') + std::string(width - full, ' ') + "]";
}

// Eight levels per character of history, as sparklines draw them, in ASCII.
std::string spark(const std::deque<double>& values) {
  static constexpr char kLevels[] = " .:-=+*#%@";
  std::string out;
  for (double v : values)
    out += kLevels[static_cast<std::size_t>(std::lround(std::clamp(v, 0.0, 100.0) / 100.0 * 9.0))];
  return out;
}

template <typename T>
std::optional<T> opt_of(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nullopt;
  return j[key].get<T>();
}

bool launch_function(const std::string& name) {
  return name.find("LaunchKernel") != std::string::npos || name.find("GraphLaunch") != std::string::npos;
}

}  // namespace

const char* sort_name(TopSort sort) {
  switch (sort) {
    case TopSort::kGpuMemory:
      return "GPU memory";
    case TopSort::kCallsPerSecond:
      return "calls/s";
    case TopSort::kKernelsPerSecond:
      return "kernels/s";
  }
  return "";
}

void update_top_model(TopModel& model, const std::string& processes_json, const std::string& gpus_json,
                      const std::string& functions_json, const std::string& anomalies_json, double dt_s) {
  std::map<std::uint32_t, TopProcess> before;
  for (auto& p : model.processes) before[p.pid] = p;
  const json procs = json::parse(processes_json, nullptr, false);
  const json gpus = json::parse(gpus_json, nullptr, false);
  const json functions = json::parse(functions_json, nullptr, false);
  const json anomalies = json::parse(anomalies_json, nullptr, false);
  std::map<std::uint32_t, std::pair<std::uint64_t, std::string>> slow;
  if (anomalies.is_object() && anomalies.contains("anomalies")) {
    for (const auto& a : anomalies["anomalies"]) {
      auto& s = slow[a.value("pid", 0u)];
      ++s.first;
      s.second = fmt::format("{} {:.1f} ms", a.value("name", std::string()),
                             static_cast<double>(a.value("dur_ns", std::uint64_t{0})) / 1e6);
    }
  }
  // Launches per second need per-process launch totals, which the API does not split:
  // the node's launch share of calls is applied to each process's call rate.
  double launch_share = 0;
  model.top_functions.clear();
  if (functions.is_object() && functions.contains("functions")) {
    std::uint64_t all = 0, launches = 0;
    for (const auto& f : functions["functions"]) {
      const auto calls = f.value("calls", std::uint64_t{0});
      const auto name = f.value("function", std::string());
      all += calls;
      if (launch_function(name)) launches += calls;
      model.top_functions.emplace_back(name, calls);
    }
    std::sort(model.top_functions.begin(), model.top_functions.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    if (model.top_functions.size() > 5) model.top_functions.resize(5);
    launch_share = all ? static_cast<double>(launches) / static_cast<double>(all) : 0;
  }
  model.processes.clear();
  if (procs.is_object() && procs.contains("processes")) {
    for (const auto& j : procs["processes"]) {
      if (j.value("exited", false)) continue;
      TopProcess p;
      p.pid = j.value("pid", 0u);
      p.comm = j.value("comm", std::string());
      p.rank = opt_of<long>(j, "rank");
      p.calls = j.value("calls", std::uint64_t{0});
      if (j.contains("gpus")) {
        for (const auto& g : j["gpus"])
          p.gpu_memory_bytes =
              std::max(p.gpu_memory_bytes, opt_of<std::uint64_t>(g, "memory_max_bytes").value_or(0));
      }
      if (p.comm.empty()) {
        // Not on a GPU (no NVML name): the command's file name.
        const std::string cmd = j.value("cmdline", std::string());
        const std::string first = cmd.substr(0, cmd.find(' '));
        p.comm = first.substr(first.rfind('/') + 1);
      }
      if (auto it = before.find(p.pid); it != before.end() && dt_s > 0 && p.calls >= it->second.calls) {
        const TopProcess& was = it->second;
        if (p.calls == was.calls && was.unchanged_s + dt_s < 2.5) {
          // Refreshed between two of the agent's snapshots: the rate stands.
          p.unchanged_s = was.unchanged_s + dt_s;
          p.calls_per_s = was.calls_per_s;
        } else if (p.calls != was.calls) {
          p.calls_per_s = static_cast<double>(p.calls - was.calls) / (was.unchanged_s + dt_s);
        }
      }
      p.kernels_per_s = p.calls_per_s * launch_share;
      if (auto it = slow.find(p.pid); it != slow.end()) {
        p.anomalies = it->second.first;
        p.last_anomaly = it->second.second;
      }
      model.processes.push_back(std::move(p));
    }
  }
  std::map<unsigned, std::deque<double>> history;
  for (auto& g : model.gpus) history[g.index] = std::move(g.util_history);
  model.gpus.clear();
  if (gpus.is_object() && gpus.contains("gpus")) {
    for (const auto& j : gpus["gpus"]) {
      TopGpu g;
      g.index = j.value("index", 0u);
      g.name = j.value("name", std::string());
      g.util_percent = opt_of<double>(j, "utilization_gpu_percent");
      if (j.contains("gpm") && j["gpm"].is_object()) {
        g.sm_active = opt_of<double>(j["gpm"], "sm_active");
        g.tensor_active = opt_of<double>(j["gpm"], "tensor_active");
      }
      g.memory_used_bytes = opt_of<std::uint64_t>(j, "memory_used_bytes");
      g.memory_total_bytes = opt_of<std::uint64_t>(j, "memory_total_bytes");
      g.util_history = std::move(history[g.index]);
      g.util_history.push_back(g.util_percent.value_or(0));
      while (g.util_history.size() > TopGpu::kHistory) g.util_history.pop_front();
      model.gpus.push_back(std::move(g));
    }
  }
}

std::vector<TopProcess> visible_processes(const TopModel& model, const TopViewState& view) {
  std::vector<TopProcess> rows;
  for (const auto& p : model.processes) {
    if (!view.filter.empty() && p.comm.find(view.filter) == std::string::npos &&
        std::to_string(p.pid).find(view.filter) == std::string::npos) {
      continue;
    }
    rows.push_back(p);
  }
  const auto key = [&](const TopProcess& p) {
    switch (view.sort) {
      case TopSort::kGpuMemory:
        return static_cast<double>(p.gpu_memory_bytes);
      case TopSort::kCallsPerSecond:
        return p.calls_per_s;
      case TopSort::kKernelsPerSecond:
        return p.kernels_per_s;
    }
    return 0.0;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const TopProcess& a, const TopProcess& b) {
    if (view.group_by_rank && a.rank != b.rank) return a.rank.value_or(1L << 30) < b.rank.value_or(1L << 30);
    if (key(a) != key(b)) return key(a) > key(b);
    return a.pid < b.pid;
  });
  return rows;
}

std::vector<std::string> render_top(const TopModel& model, const TopViewState& view, std::size_t width,
                                    std::size_t height) {
  std::vector<std::string> lines;
  lines.push_back(
      fmt::format("eacgm top{}  sort: {}  filter: {}  group: {}   keys: m/s/k sort  / filter  g group  "
                  "up/down select  c capture 5 s  q quit",
                  model.source.empty() ? "" : " (" + model.source + ")", sort_name(view.sort),
                  view.filter.empty() ? "-" : view.filter, view.group_by_rank ? "rank" : "-"));
  if (model.gpus.empty()) lines.push_back("no GPU (NVML) on this node");
  for (const auto& g : model.gpus) {
    const double used = static_cast<double>(g.memory_used_bytes.value_or(0));
    const double total = static_cast<double>(g.memory_total_bytes.value_or(0));
    lines.push_back(fmt::format(
        "GPU {} {:<20.20} util {} {:>5} sm {:>4} tensor {:>4} mem {} {}/{}  {}", g.index, g.name,
        bar(g.util_percent.value_or(0), 10),
        g.util_percent ? fmt::format("{:.0f}%", *g.util_percent) : std::string("n/a"),
        exporting::format_ratio_percent(g.sm_active), exporting::format_ratio_percent(g.tensor_active),
        bar(total > 0 ? used / total * 100.0 : 0, 10), bytes_text(g.memory_used_bytes.value_or(0)),
        bytes_text(g.memory_total_bytes.value_or(0)), spark(g.util_history)));
  }
  lines.push_back(fmt::format("{:>8} {:<16} {:>5} {:>9} {:>11} {:>10} {:>9}", "PID", "COMM", "RANK",
                              "GPU MEM", "CALLS/S", "KERNELS/S", "ANOMALIES"));
  const auto rows = visible_processes(model, view);
  const std::size_t detail = 4;
  const std::size_t room = height > lines.size() + detail + 1 ? height - lines.size() - detail - 1 : 1;
  std::optional<long> group;
  bool first = true;
  for (std::size_t i = 0; i < rows.size() && i < room; ++i) {
    const auto& p = rows[i];
    if (view.group_by_rank && (first || p.rank != group)) {
      group = p.rank;
      first = false;
    }
    lines.push_back(fmt::format("{}{:>7} {:<16.16} {:>5} {:>9} {:>11.1f} {:>10.1f} {:>9}",
                                i == view.selected ? '>' : ' ', p.pid, p.comm,
                                p.rank ? std::to_string(*p.rank) : std::string("-"),
                                bytes_text(p.gpu_memory_bytes), p.calls_per_s, p.kernels_per_s, p.anomalies));
  }
  if (rows.empty())
    lines.push_back(view.filter.empty() ? "no traced process yet" : "no process matches the filter");
  lines.push_back("");
  if (view.selected < rows.size()) {
    const auto& p = rows[view.selected];
    lines.push_back(fmt::format("pid {} ({}): {} calls, {} slow calls{}", p.pid, p.comm, p.calls, p.anomalies,
                                p.last_anomaly.empty() ? "" : ", last " + p.last_anomaly));
  }
  std::string fns = "node's top functions:";
  for (const auto& [name, calls] : model.top_functions) fns += fmt::format(" {} {}", name, calls);
  lines.push_back(fns);
  if (!model.status.empty()) lines.push_back(model.status);
  if (lines.size() > height) lines.resize(height);
  for (auto& l : lines) {
    if (l.size() > width) l.resize(width);
  }
  return lines;
}

}  // namespace eacgm::cli
