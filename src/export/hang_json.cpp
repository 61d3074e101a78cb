// JSON of the hang diagnosis (export/hang_json.h).
#include "export/hang_json.h"

#include <fmt/format.h>

#include "export/python_stack_text.h"

namespace eacgm::exporting {
namespace {

json comm_id_json(std::uint64_t id) { return id == 0 ? json(nullptr) : json(fmt::format("0x{:016x}", id)); }

json rank_json(const analysis::HangRank& r) {
  json out{{"rank", r.rank},
           {"pid", r.pid},
           {"exited", !r.alive},
           {"in_call", r.in_call.empty() ? json(nullptr) : json(r.in_call)},
           {"in_call_ns", r.in_call_ns},
           {"last_entered", r.last_entered.empty() ? json(nullptr) : json(r.last_entered)},
           {"last_instance", r.last_number}};
  if (r.python_stack) {
    out["tid"] = r.in_call_tid;
    out["python_stack"] = python_stack_frames(*r.python_stack);
  }
  return out;
}

json stack_json(const analysis::HangRank& r) {
  return json{
      {"rank", r.rank < 0 ? json(nullptr) : json(r.rank)},
      {"pid", r.pid},
      {"tid", r.in_call_tid},
      {"in_call", r.in_call},
      {"in_call_ns", r.in_call_ns},
      {"python_stack", r.python_stack ? python_stack_frames(*r.python_stack) : std::vector<std::string>{}}};
}

json ranks_json(const std::vector<analysis::HangRank>& ranks) {
  json out = json::array();
  for (const auto& r : ranks) out.push_back(rank_json(r));
  return out;
}

}  // namespace

json hang_json(const analysis::Hang& h) {
  const bool comm = h.rule == "communicator";
  json stacks = json::array();
  for (const auto& r : h.stacks) stacks.push_back(stack_json(r));
  return json{{"kind", "hang"},
              {"rule", h.rule},
              {"over", h.end_ns != 0},
              {"start_ns", h.start_ns},
              {"end_ns", h.end_ns == 0 ? json(nullptr) : json(h.end_ns)},
              {"age_ns", h.age_ns},
              {"comm_id", comm_id_json(h.comm_id)},
              {"domain", h.domain},
              {"name", h.function},
              {"instance", comm ? json(h.number) : json(nullptr)},
              {"pid", h.pid},
              {"tid", comm ? json(nullptr) : json(h.tid)},
              {"rank", h.rank < 0 ? json(nullptr) : json(h.rank)},
              {"missing_ranks", h.missing_ranks},
              {"waiting_ranks", h.waiting_ranks},
              {"python_stacks", stacks},
              {"verdict", h.verdict}};
}

json hangs_json(const analysis::HangSummary& hangs) {
  json comms = json::array();
  for (const auto& d : hangs.communicators) {
    comms.push_back(json{{"comm_id", comm_id_json(d.comm_id)},
                         {"nranks", d.nranks},
                         {"name", d.function},
                         {"instance", d.number},
                         {"age_ns", d.age_ns},
                         {"in", ranks_json(d.in)},
                         {"missing", ranks_json(d.missing)},
                         {"unseen", d.unseen},
                         {"hang", d.hang},
                         {"verdict", d.verdict}});
  }
  json current = json::array();
  for (const auto& h : hangs.current) current.push_back(hang_json(h));
  return json{
      {"communicators", std::move(comms)}, {"hangs", std::move(current)}, {"hang_total", hangs.total}};
}

json hang_anomalies_json(const analysis::HangSummary& hangs) {
  json out = json::array();
  for (const auto& h : hangs.ended) out.push_back(hang_json(h));
  for (const auto& h : hangs.current) out.push_back(hang_json(h));
  return out;
}

}  // namespace eacgm::exporting
