// JSON of the job's hang verdict (export/job_verdict_json.h).
#include "export/job_verdict_json.h"

#include <fmt/format.h>

namespace eacgm::exporting {
namespace {

json rank_json(const analysis::JobRank& r) {
  return json{{"node", r.node},
              {"rank", r.rank},
              {"pid", r.pid},
              {"entered", r.entered},
              {"finished", r.finished},
              {"waiting_ns", r.waiting_ns},
              {"collective", r.collective.empty() ? json(nullptr) : json(r.collective)},
              {"report_age_ns", r.report_age_ns}};
}

json ranks_json(const std::vector<analysis::JobRank>& ranks) {
  json out = json::array();
  for (const auto& r : ranks) out.push_back(rank_json(r));
  return out;
}

}  // namespace

json job_comm_json(const analysis::JobCommVerdict& v) {
  return json{{"comm_id", fmt::format("0x{:016x}", v.comm_id)},
              {"nranks", v.nranks},
              {"name", v.function.empty() ? json(nullptr) : json(v.function)},
              {"instance", v.number},
              {"age_ns", v.age_ns},
              {"in", ranks_json(v.in)},
              {"missing", ranks_json(v.missing)},
              {"unreported", v.unreported},
              {"nodes", v.nodes},
              {"hang", v.hang},
              {"start_ns", v.start_ns},
              {"end_ns", v.end_ns == 0 ? json(nullptr) : json(v.end_ns)},
              {"verdict", v.verdict}};
}

json job_comms_json(std::span<const analysis::JobCommVerdict> verdicts) {
  json out = json::array();
  for (const auto& v : verdicts) out.push_back(job_comm_json(v));
  return out;
}

json job_verdict_json(const analysis::JobVerdictSummary& s) {
  json ended = json::array();
  for (const auto& v : s.ended) ended.push_back(job_comm_json(v));
  return json{{"store", s.shared},
              {"node", s.node},
              {"read_age_ns", s.read_age_ns},
              {"other_ranks", s.other_ranks},
              {"communicators", job_comms_json(s.communicators)},
              {"ended", std::move(ended)},
              {"hang_total", s.total}};
}

}  // namespace eacgm::exporting
