// Merges captures' traces into one timeline (export/perfetto_merge.h).
#include "export/perfetto_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "export/json_text.h"
#include "export/perfetto_trace.h"

namespace eacgm::exporting {
namespace {

using json = nlohmann::json;

// A part's ids: every pid and tid of the part gets one of the merged trace's own, from
// one sequence (a process's main thread keeps its process's id, as Linux numbers them).
class IdMap {
 public:
  explicit IdMap(std::uint64_t& next) : next_(next) {}
  std::uint64_t pid(std::uint64_t old) {
    auto [it, added] = pids_.emplace(old, 0);
    if (added) it->second = next_++;
    return it->second;
  }
  std::uint64_t tid(std::uint64_t old) {
    if (auto p = pids_.find(old); p != pids_.end()) return p->second;
    auto [it, added] = tids_.emplace(old, 0);
    if (added) it->second = next_++;
    return it->second;
  }
  const std::map<std::uint64_t, std::uint64_t>& pids() const { return pids_; }

 private:
  std::uint64_t& next_;
  std::map<std::uint64_t, std::uint64_t> pids_, tids_;
};

std::optional<std::uint64_t> id_of(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  return std::nullopt;
}

void put_event(std::string& out, const json& e, bool& any) {
  if (any) out += ',';
  out += json_text(e);
  out += '\n';
  any = true;
}

json process_name(std::uint64_t pid, const std::string& name) {
  return json{{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", name}}}};
}

json sort_index(std::uint64_t pid, long index) {
  return json{{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"args", {{"sort_index", index}}}};
}

// The part's window's start on the common clock, in µs (none when it does not say).
std::optional<double> window_begin_us(const json& capture, std::int64_t offset_ns) {
  if (!capture.is_object()) return std::nullopt;
  const auto begin = id_of(capture.value("begin_ns", json()));
  const auto wall = id_of(capture.value("wall_offset_ns", json()));
  if (!begin || !wall) return std::nullopt;
  return (static_cast<double>(*begin + *wall) + static_cast<double>(offset_ns)) / 1000.0;
}

}  // namespace

Result<std::string> merge_perfetto_traces(const std::vector<TracePart>& parts,
                                          const std::vector<MissingPart>& missing, const json& about,
                                          std::vector<MissingPart>* refused) {
  // Every part's and missing part's place among the processes: by sort key, then label.
  std::vector<std::tuple<long, std::string, std::size_t>> order;
  for (std::size_t i = 0; i < parts.size(); ++i) order.emplace_back(parts[i].sort_key, parts[i].label, i);
  for (std::size_t i = 0; i < missing.size(); ++i)
    order.emplace_back(missing[i].sort_key, missing[i].label, parts.size() + i);
  std::sort(order.begin(), order.end());
  std::vector<long> place(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) place[std::get<2>(order[k])] = static_cast<long>(k);

  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool any = false;
  std::uint64_t next_id = 1;
  json listed = json::array();
  std::optional<double> begin_us;
  // One part's events into `part_out`; an error (and nothing kept) when its trace is no
  // capture document.
  const auto merge_part = [&](std::size_t i, std::string& part_out, bool& part_any) -> Status {
    const TracePart& part = parts[i];
    json doc = json::parse(part.trace, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
      return make_error(
          fmt::format("the trace of {} is not a JSON object ({} bytes)", part.label, part.trace.size()));
    }
    auto events = doc.find("traceEvents");
    if (events == doc.end() || !events->is_array())
      return make_error(fmt::format("the trace of {} has no traceEvents array", part.label));
    const json capture = doc.value("eacgm_capture", json());
    const std::optional<std::uint64_t> captured =
        capture.is_object() ? id_of(capture.value("pid", json())) : std::nullopt;
    const double shift_us = static_cast<double>(part.offset_ns) / 1000.0;
    IdMap ids(next_id);
    std::map<std::uint64_t, std::string> names;  // the part's pids, by their names in it
    std::size_t n = 0;
    for (json& e : *events) {
      ++n;
      if (!e.is_object())
        return make_error(fmt::format("the trace of {}: event {} is not a JSON object", part.label, n));
      const auto pid = id_of(e.value("pid", json()));
      if (!pid) {
        return make_error(
            fmt::format("the trace of {}: event {} has no pid (a whole number from 0)", part.label, n));
      }
      const std::string ph = e.value("ph", std::string());
      const std::string name = e.value("name", std::string());
      if (ph == "M" && name == "process_name") {
        const json& args = e.value("args", json::object());
        names[*pid] = args.is_object() ? args.value("name", std::string()) : std::string();
        ids.pid(*pid);
        continue;  // named again below, with the part's label
      }
      if (ph == "M" && name == "process_sort_index") continue;  // placed again below
      e["pid"] = ids.pid(*pid);
      if (auto t = e.find("tid"); t != e.end()) {
        const auto tid = id_of(*t);
        if (!tid) {
          return make_error(
              fmt::format("the trace of {}: event {} has a tid that is no whole number", part.label, n));
        }
        *t = ids.tid(*tid);
      }
      if (auto ts = e.find("ts"); ts != e.end()) {
        if (!ts->is_number())
          return make_error(
              fmt::format("the trace of {}: event {} has a ts that is no number", part.label, n));
        *ts = ts->get<double>() + shift_us;
      }
      // Flow ids pair the two ends of an arrow across the whole trace: each part's apart.
      if (auto id = e.find("id"); id != e.end()) {
        if (const auto v = id_of(*id); v && *v < (std::uint64_t{1} << 40)) {
          *id = (std::uint64_t{i + 1} << 40) | *v;
        } else {
          *id = fmt::format("{}:{}", i, id->is_string() ? id->get<std::string>() : id->dump());
        }
      }
      put_event(part_out, e, part_any);
    }
    // The part's processes, named by its label and placed by its sort key: the captured
    // process first, then the others, then the GPUs.
    for (const auto& [old, merged] : ids.pids()) {
      const auto named = names.find(old);
      const std::string own = named != names.end() && !named->second.empty() ? named->second : "";
      std::string label;
      if (old == PerfettoTrace::kGpuPid) {
        label = fmt::format("{}: {}", part.label, own.empty() ? "GPUs" : own);
      } else if (own.empty()) {
        label = fmt::format("{}: pid {}", part.label, old);
      } else {
        label = fmt::format("{}: {} (pid {})", part.label, own, old);
      }
      put_event(part_out, process_name(merged, label), part_any);
      const long rank_in_part = captured && old == *captured ? 0 : (old == PerfettoTrace::kGpuPid ? 2 : 1);
      put_event(part_out, sort_index(merged, place[i] * 4 + rank_in_part), part_any);
    }
    json entry = part.about;
    entry["label"] = part.label;
    entry["offset_ns"] = part.offset_ns;
    if (capture.is_object()) entry["capture"] = capture;
    listed.push_back(std::move(entry));
    if (const auto b = window_begin_us(capture, part.offset_ns); b && (!begin_us || *b < *begin_us))
      begin_us = b;
    return {};
  };
  std::vector<std::pair<MissingPart, long>> absent_parts;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::string part_out;
    bool part_any = any;
    auto st = merge_part(i, part_out, part_any);
    if (!st) {
      if (refused == nullptr) return std::move(st).take_error();
      MissingPart m{parts[i].label, "its agent's answer is no capture: " + st.error(), parts[i].sort_key,
                    parts[i].about};
      refused->push_back(m);
      absent_parts.emplace_back(std::move(m), place[i]);
      continue;
    }
    out += part_out;
    any = part_any;
  }
  for (std::size_t j = 0; j < missing.size(); ++j)
    absent_parts.emplace_back(missing[j], place[parts.size() + j]);
  // The parts that did not come: a process each, named, with one instant saying why at
  // the window's start.
  json absent = json::array();
  for (const auto& [m, at] : absent_parts) {
    const std::uint64_t pid = next_id++;
    put_event(out, process_name(pid, fmt::format("{}: not captured", m.label)), any);
    put_event(out, sort_index(pid, at * 4), any);
    put_event(out,
              json{{"ph", "i"},
                   {"s", "p"},
                   {"name", "not captured: " + m.reason},
                   {"cat", "capture"},
                   {"ts", begin_us.value_or(0.0)},
                   {"pid", pid},
                   {"args", m.about}},
              any);
    json entry = m.about;
    entry["label"] = m.label;
    entry["reason"] = m.reason;
    absent.push_back(std::move(entry));
  }
  json description = about.is_object() ? about : json::object();
  description["parts"] = std::move(listed);
  description["missing"] = std::move(absent);
  out += "],\"eacgm_job_capture\":";
  out += json_text(description);
  out += "}\n";
  return out;
}

}  // namespace eacgm::exporting
