// Per-tick summary events for /api/v1/stream.
#include "server/summary_stream.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "export/json_text.h"

namespace eacgm::server {

std::string SummaryStream::call_event(const CallEvent& e) {
  nlohmann::ordered_json doc = {{"ts_ns", e.ts_ns},
                                {"pid", e.pid},
                                {"tid", e.tid},
                                {"comm", std::string(e.comm_view())},
                                {"domain", std::string(e.domain())},
                                {"name", std::string(e.function())},
                                {"dur_ns", e.has_exit ? nlohmann::ordered_json(e.dur_ns) : nullptr},
                                {"ret", e.has_exit ? nlohmann::ordered_json(e.ret) : nullptr}};
  return exporting::json_text(doc);
}

void SummaryStream::sample_calls(std::span<const CallEvent> calls) {
  if (const auto g = channel_->generation(); g != interest_generation_) {
    interest_generation_ = g;
    interest_ = channel_->interest();
    sampled_by_tag_.assign(interest_.tags.size(), 0);
  }
  if (!interest_.any_tag && interest_.tags.empty()) return;
  for (const auto& e : calls) {
    if (!e.probe || e.nested) continue;
    const std::uint64_t second = e.ts_ns / 1'000'000'000;
    if (second > sample_second_) {  // a late call of an earlier second counts in this one
      sample_second_ = second;
      sampled_any_ = 0;
      std::fill(sampled_by_tag_.begin(), sampled_by_tag_.end(), 0);
    }
    bool take = false;
    if (interest_.any_tag && sampled_any_ < kCallsPerSecond) {
      ++sampled_any_;
      take = true;
    }
    for (std::size_t i = 0; i < interest_.tags.size(); ++i) {
      if (interest_.tags[i] == e.pid && sampled_by_tag_[i] < kCallsPerSecond) {
        ++sampled_by_tag_[i];
        take = true;
      }
    }
    if (take) channel_->publish_tagged(call_event(e), "call", e.pid);
  }
}

void SummaryStream::on_calls(std::span<const CallEvent> calls) {
  sample_calls(calls);
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
  return exporting::json_text(doc);
}

void SummaryStream::on_tick(std::chrono::steady_clock::time_point, const CounterValues& counters) {
  channel_->publish(take_event(counters), "summary");
}

}  // namespace eacgm::server
