// Samples of one family whose label sets come out equal — the processes of one container
// once their series carry pod labels instead of pids — merged into one sample: summed
// (counts, bytes, utilisation) or the largest (ratios), in first-seen order.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/prometheus_text.h"

namespace eacgm::exporting {

class MergedSeries {
 public:
  enum class Merge : std::uint8_t { kSum, kMax };
  using Value = std::variant<std::uint64_t, double>;

  explicit MergedSeries(Merge merge = Merge::kSum) : merge_(merge) {}
  void add(const Labels& labels, Value value);
  // The samples, in the order their label sets were first added.
  void write(ExpositionWriter& out) const;
  std::size_t size() const { return samples_.size(); }

 private:
  Merge merge_;
  std::vector<std::pair<Labels, Value>> samples_;
  std::map<std::string, std::size_t, std::less<>> index_;
};

}  // namespace eacgm::exporting
