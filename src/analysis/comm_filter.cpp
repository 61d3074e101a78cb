// Filtering calls by process name, and the count of what was left out.
#include "analysis/comm_filter.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/proc_file.h"

namespace eacgm::analysis {

CommFilter::CommFilter(const std::vector<std::string>& names, std::shared_ptr<Consumer> inner)
    : ForwardingConsumer(inner ? std::move(inner) : std::make_shared<ConsumerList>()) {
  for (const auto& n : names) names_.insert(n.substr(0, std::min(n.size(), kCommMax)));
  comm_of_ = [](std::uint32_t pid) { return read_proc_comm(pid); };
}

bool CommFilter::pid_matches(std::uint32_t pid) {
  if (const auto* known = pid_names_.find(pid)) return known->first;
  std::string comm = comm_of_(pid);
  const bool m = matches(comm);
  return pid_names_.put(pid, std::pair{m, std::move(comm)}).first;
}

void CommFilter::count_left_out(std::string_view comm, std::uint64_t calls) {
  left_out_ += calls;
  auto it = others_.find(std::string(comm));
  if (it != others_.end()) {
    it->second += calls;
  } else if (others_.size() < kMaxNamesCounted) {
    others_.emplace(std::string(comm), calls);
  } else {
    others_[""] += calls;
  }
}

void CommFilter::on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) {
  kept_counts_.clear();
  kept_timings_.clear();
  for (const auto& c : counts) {
    if (pid_matches(c.pid)) {
      kept_counts_.push_back(c);
      passed_ += c.calls;
    } else {
      count_left_out(pid_names_.find(c.pid)->second, c.calls);  // put by pid_matches
    }
  }
  for (const auto& t : timings) {
    if (pid_matches(t.pid)) kept_timings_.push_back(t);
  }
  if (!kept_counts_.empty() || !kept_timings_.empty()) inner_->on_counts(kept_counts_, kept_timings_);
}

// Waits of other processes are left out without a count: they are not calls.
void CommFilter::on_host_waits(std::span<const HostWaitProcess> processes,
                               std::span<const HostWaitTimings> waits) {
  kept_wait_processes_.clear();
  kept_waits_.clear();
  for (const auto& p : processes) {
    if (pid_matches(p.pid)) kept_wait_processes_.push_back(p);
  }
  for (const auto& w : waits) {
    if (pid_matches(w.pid)) kept_waits_.push_back(w);
  }
  if (!kept_wait_processes_.empty() || !kept_waits_.empty())
    inner_->on_host_waits(kept_wait_processes_, kept_waits_);
}

// Calls in flight of other processes are left out without a count: they are counted as
// calls when they return. Every scan goes on, empty or not, so the list empties too.
void CommFilter::on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) {
  kept_inflight_.clear();
  for (const auto& c : calls) {
    if (pid_matches(c.call.pid)) kept_inflight_.push_back(c);
  }
  inner_->on_inflight(kept_inflight_, scan_mono_ns);
}

void CommFilter::on_overhead(const OverheadReport& report) {
  OverheadReport kept = report;
  std::erase_if(kept.processes, [this](const ProcessOverhead& p) { return !pid_matches(p.pid); });
  inner_->on_overhead(kept);
}

void CommFilter::on_calls(std::span<const CallEvent> calls) {
  kept_.clear();
  for (const auto& e : calls) {
    const auto comm = e.comm_view();
    if (matches(comm)) {
      kept_.push_back(e);
      continue;
    }
    count_left_out(comm, 1);
  }
  passed_ += kept_.size();
  if (!kept_.empty()) inner_->on_calls(kept_);
}

std::string CommFilter::summary(std::size_t most) const {
  if (left_out_ == 0) return "";
  std::vector<std::pair<std::string, std::uint64_t>> byn(others_.begin(), others_.end());
  std::stable_sort(byn.begin(), byn.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string list;
  std::size_t shown = 0;
  for (const auto& [name, n] : byn) {
    if (shown == most) break;
    list += fmt::format("{}{} {}", list.empty() ? "" : ", ", name.empty() ? "(other names)" : name, n);
    ++shown;
  }
  if (byn.size() > shown) {
    list += fmt::format("; {} more name{}", byn.size() - shown, byn.size() - shown == 1 ? "" : "s");
  }
  return fmt::format("{} call{} of other processes not shown ({})", left_out_, left_out_ == 1 ? "" : "s",
                     list);
}

// Stacks of other processes are left out without a count: they are samples, not calls.
void CommFilter::on_python_stacks(std::span<const PythonStack> stacks) {
  kept_stacks_.clear();
  for (const auto& s : stacks) {
    if (matches(s.comm)) kept_stacks_.push_back(s);
  }
  if (!kept_stacks_.empty()) inner_->on_python_stacks(kept_stacks_);
}

}  // namespace eacgm::analysis
