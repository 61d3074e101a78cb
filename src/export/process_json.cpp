// One process's document and the overhead and per-process GPU work documents.
#include "export/process_json.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "analysis/gpu_work.h"
#include "analysis/host_waits.h"
#include "analysis/process_calls.h"
#include "core/probe_cost.h"
#include "export/api_json.h"
#include "export/host_waits_json.h"
#include "export/json_text.h"
#include "export/overhead_report.h"

namespace eacgm::exporting {
namespace {

json header(const analysis::AnalysisSnapshot& snap) {
  return json{
      {"time_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(snap.time.time_since_epoch()).count()},
      {"sequence", snap.sequence}};
}

}  // namespace

std::string api_process(const analysis::AnalysisSnapshot& snap, std::uint32_t pid) {
  json doc = header(snap);
  doc["pid"] = pid;
  std::string comm;
  json functions = json::array();
  if (const auto* by_process = snap.find<analysis::ProcessCallsView>()) {
    const auto it = by_process->processes.find(pid);
    if (it != by_process->processes.end() && it->second.calls) functions = call_rows_json(*it->second.calls);
  }
  doc["functions"] = std::move(functions);

  json work = json::array();
  for (const auto& r : snap.get<analysis::GpuWorkStats>().rows()) {
    if (r.pid != pid) continue;
    if (comm.empty()) comm = r.comm;
    work.push_back(json{{"stream", r.stream},
                        {"kind", std::string(analysis::gpu_work_kind_name(r.kind))},
                        {"name", r.name},
                        {"direction", r.direction},
                        {"count", r.count},
                        {"graph", r.graph},
                        {"errors", r.errors},
                        {"bytes", r.bytes}});
  }
  doc["work"] = std::move(work);

  json waits = nullptr;
  const json all_waits = host_waits_json(snap.get<analysis::HostWaitSummary>());
  for (const auto& p : all_waits.at("processes")) {
    if (p.at("pid").get<std::uint32_t>() != pid) continue;
    if (comm.empty()) comm = p.at("comm").get<std::string>();
    waits = p;
  }
  doc["waits"] = std::move(waits);

  json overhead = nullptr;
  const nlohmann::json all_overhead = overhead_json(snap.get<OverheadReport>());
  for (const auto& p : all_overhead.at("processes")) {
    if (p.at("pid").get<std::uint32_t>() == pid) overhead = p;
  }
  doc["overhead"] = std::move(overhead);
  doc["comm"] = comm;
  return json_text(doc);
}

std::string api_overhead(const analysis::AnalysisSnapshot& snap) {
  json doc = header(snap);
  const nlohmann::json body = overhead_json(snap.get<OverheadReport>());  // held: items() refers into it
  for (const auto& [key, value] : body.items()) doc[key] = value;
  return json_text(doc);
}

std::string api_work(const analysis::AnalysisSnapshot& snap) {
  struct Totals {
    std::string comm;
    std::uint64_t kernels = 0;
    std::uint64_t memsets = 0;
    std::uint64_t copies = 0;
    std::uint64_t errors = 0;
  };
  std::map<std::uint32_t, Totals> by_pid;
  for (const auto& r : snap.get<analysis::GpuWorkStats>().rows()) {
    Totals& t = by_pid[r.pid];
    if (t.comm.empty()) t.comm = r.comm;
    t.errors += r.errors;
    if (r.kind == GpuWork::kKernel) t.kernels += r.count;
    if (r.kind == GpuWork::kMemset) t.memsets += r.count;
    if (r.kind == GpuWork::kCopy) t.copies += r.count;
  }
  std::vector<std::pair<std::uint32_t, Totals>> rows(by_pid.begin(), by_pid.end());
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second.kernels > b.second.kernels; });
  json list = json::array();
  for (const auto& [pid, t] : rows) {
    list.push_back(json{{"pid", pid},
                        {"comm", t.comm},
                        {"kernels", t.kernels},
                        {"memsets", t.memsets},
                        {"copies", t.copies},
                        {"errors", t.errors}});
  }
  json doc = header(snap);
  doc["processes"] = std::move(list);
  return json_text(doc);
}

}  // namespace eacgm::exporting
