// Exponentially weighted mean and mean absolute deviation of burst lengths.
#include "govern/hookcore/burst_predictor.h"

#include <algorithm>
#include <cmath>

namespace eacgm::govern {

BurstPredictor::BurstPredictor(double weight) : weight_(std::clamp(weight, 0.01, 1.0)) {}

void BurstPredictor::record(std::uint64_t burst_us) {
  double x = static_cast<double>(burst_us);
  if (samples_ == 0) {
    mean_ = x;
    deviation_ = 0;
  } else {
    double err = x - mean_;
    mean_ += weight_ * err;
    deviation_ += weight_ * (std::fabs(err) - deviation_);
  }
  ++samples_;
}

std::uint64_t BurstPredictor::predict() const {
  if (samples_ == 0) return 0;
  return static_cast<std::uint64_t>(std::llround(mean_ + 0.5 * deviation_));
}

}  // namespace eacgm::govern
