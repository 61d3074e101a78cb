// JSON of the calls in flight (export/inflight_json.h).
#include "export/inflight_json.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "analysis/hang_diagnosis.h"
#include "analysis/inflight_calls.h"
#include "export/event_format.h"
#include "export/hang_json.h"
#include "export/job_verdict_json.h"
#include "export/json_text.h"
#include "export/python_stack_text.h"

namespace eacgm::exporting {
namespace {

json rank_of(const CallEvent& call, const ApiOptions& options) {
  if (options.rank_of_pid) {
    if (auto rank = options.rank_of_pid(call.pid).rank) return *rank;
  }
  if (call.nccl_rank >= 0) return call.nccl_rank;
  return nullptr;
}

}  // namespace

json inflight_json(const analysis::InflightSummary& inflight, const ApiOptions& options) {
  json calls = json::array();
  for (const analysis::InflightRow& row : inflight.rows) {
    const CallEvent& c = row.call.call;
    calls.push_back(json{{"pid", c.pid},
                         {"tid", c.tid},
                         {"comm", std::string(c.comm_view())},
                         {"rank", rank_of(c, options)},
                         {"domain", std::string(c.domain())},
                         {"name", std::string(c.function())},
                         {"age_ns", row.age_ns},
                         {"ts_ns", c.ts_ns},
                         {"args", json_args<json>(c)}});
    if (row.call.python_stack) calls.back()["python_stack"] = python_stack_frames(*row.call.python_stack);
  }
  return json{{"min_age_ns", inflight.min_age_ns},
              {"in_flight", inflight.in_flight},
              {"calls", std::move(calls)},
              {"over_cap", inflight.over_cap}};
}

json inflight_doc(const analysis::AnalysisSnapshot& snap, const ApiOptions& options) {
  json doc{
      {"time_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(snap.time.time_since_epoch()).count()},
      {"sequence", snap.sequence}};
  doc.update(inflight_json(snap.get<analysis::InflightSummary>(), options));
  doc.update(hangs_json(snap.get<analysis::HangSummary>()));
  doc["job"] = job_verdict_json(snap.get<analysis::JobVerdictSummary>());
  return doc;
}

std::string api_inflight(const analysis::AnalysisSnapshot& snap, const ApiOptions& options) {
  return json_text(inflight_doc(snap, options));
}

json inflight_stacks_json(const analysis::InflightSummary& inflight, std::span<const std::uint32_t> pids) {
  json out = json::array();
  for (const std::uint32_t pid : pids) {
    // The rows are oldest first: a process's first row with a stack is its longest wait.
    const auto row = std::find_if(inflight.rows.begin(), inflight.rows.end(), [pid](const auto& r) {
      return r.call.call.pid == pid && r.call.python_stack != nullptr;
    });
    if (row == inflight.rows.end()) continue;
    out.push_back(json{{"pid", pid},
                       {"tid", row->call.call.tid},
                       {"name", std::string(row->call.call.function())},
                       {"age_ns", row->age_ns},
                       {"python_stack", python_stack_frames(*row->call.python_stack)}});
  }
  return out;
}

}  // namespace eacgm::exporting
