// Equal label sets merged (see merged_series.h).
#include "export/merged_series.h"

#include <algorithm>

namespace eacgm::exporting {
namespace {

std::string key_of(const Labels& labels) {
  std::string key;
  for (const Label& l : labels) {
    key += l.name;
    key += '\x1f';
    key += l.value;
    key += '\x1e';
  }
  return key;
}

double as_double(const MergedSeries::Value& v) {
  return std::visit([](auto x) { return static_cast<double>(x); }, v);
}

}  // namespace

void MergedSeries::add(const Labels& labels, Value value) {
  std::string key = key_of(labels);
  auto it = index_.find(key);
  if (it == index_.end()) {
    index_.emplace(std::move(key), samples_.size());
    samples_.emplace_back(labels, value);
    return;
  }
  Value& have = samples_[it->second].second;
  const auto* a = std::get_if<std::uint64_t>(&have);
  const auto* b = std::get_if<std::uint64_t>(&value);
  if (merge_ == Merge::kSum) {
    if (a != nullptr && b != nullptr) {
      have = *a + *b;
    } else {
      have = as_double(have) + as_double(value);
    }
  } else if (as_double(value) > as_double(have)) {
    have = value;
  }
}

void MergedSeries::write(ExpositionWriter& out) const {
  for (const auto& [labels, value] : samples_) {
    std::visit([&, &l = labels](auto v) { out.add(l, v); }, value);
  }
}

}  // namespace eacgm::exporting
