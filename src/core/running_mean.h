// RunningMean: the mean of the values seen so far, of the figures that may be missing
// from a sample (a GPU's activity before GPM's second pass, a history point's column).
#pragma once

#include <cstdint>
#include <optional>

namespace eacgm {

struct RunningMean {
  double sum = 0;
  std::uint64_t n = 0;

  void add(double v) {
    sum += v;
    ++n;
  }
  void add(const std::optional<double>& v) {  // a missing value is not a zero
    if (v) add(*v);
  }
  std::optional<double> value() const {
    return n ? std::optional<double>(sum / static_cast<double>(n)) : std::nullopt;
  }
};

}  // namespace eacgm
