// Filtering calls by process name, and the count of what was left out.
#include "analysis/comm_filter.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace eacgm::analysis {

CommFilter::CommFilter(const std::vector<std::string>& names, std::shared_ptr<Consumer> inner)
    : inner_(inner ? std::move(inner) : std::make_shared<ConsumerList>()) {
  for (const auto& n : names) names_.insert(n.substr(0, std::min(n.size(), kCommMax)));
}

void CommFilter::on_calls(std::span<const CallEvent> calls) {
  kept_.clear();
  for (const auto& e : calls) {
    const auto comm = e.comm_view();
    if (matches(comm)) {
      kept_.push_back(e);
      continue;
    }
    ++left_out_;
    auto it = others_.find(std::string(comm));
    if (it != others_.end()) {
      ++it->second;
    } else if (others_.size() < kMaxNamesCounted) {
      others_.emplace(std::string(comm), 1);
    } else {
      ++others_[""];
    }
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
