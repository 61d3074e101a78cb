// Per-tick summary events for /api/v1/stream.
#include "server/summary_stream.h"

#include <chrono>
#include <nlohmann/json.hpp>

namespace eacgm::server {

void SummaryStream::on_calls(std::span<const CallEvent> calls) {
  for (const auto& e : calls) {
    if (!e.probe || e.nested) continue;
    auto it = counts_.find(e.probe.get());
    Count* c = nullptr;
    if (it != counts_.end()) {
      c = &it->second;
    } else if (counts_.size() < max_functions_) {
      pinned_.push_back(e.probe);
      c = &counts_.emplace(e.probe.get(), Count{e.probe->spec.domain, e.probe->function, 0, 0}).first->second;
    } else {
      c = &other_;
    }
    ++c->calls;
    if (e.is_error()) ++c->errors;
  }
}

std::string SummaryStream::take_event(const CounterValues& counters) {
  nlohmann::ordered_json functions = nlohmann::ordered_json::array();
  auto add = [&](Count& c) {
    if (c.calls == 0) return;
    functions.push_back(
        {{"domain", c.domain}, {"function", c.function}, {"calls", c.calls}, {"errors", c.errors}});
    c.calls = 0;
    c.errors = 0;
  };
  for (auto& [probe, c] : counts_) add(c);
  add(other_);
  nlohmann::ordered_json moved = nlohmann::ordered_json::object();
  for (const auto& v : counters.values) {
    auto& last = last_counters_[v.def->key];
    if (v.value != last) moved[v.def->key] = v.value;
    last = v.value;
  }
  nlohmann::ordered_json doc = {{"sequence", ++sequence_},
                                {"time_ns", std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count()},
                                {"functions", std::move(functions)},
                                {"counters", std::move(moved)}};
  return doc.dump();
}

void SummaryStream::on_tick(std::chrono::steady_clock::time_point, const CounterValues& counters) {
  channel_->publish(take_event(counters), "summary");
}

}  // namespace eacgm::server
