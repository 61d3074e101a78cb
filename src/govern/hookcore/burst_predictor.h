// Predicts the length of a program's next GPU burst (the work between two points where
// the GPU has caught up with it) from the bursts seen so far, so the hook can ask the
// scheduler for a slice that fits instead of being cut off mid-burst.
#pragma once

#include <cstdint>

namespace eacgm::govern {

class BurstPredictor {
 public:
  // `weight` of each new burst in the moving average, in [0.01, 1].
  explicit BurstPredictor(double weight = 0.25);

  void record(std::uint64_t burst_us);
  // 0 until a burst has been seen. Leans toward the longer recent bursts (average plus
  // half the mean deviation): an under-estimate costs an overrun, an over-estimate
  // only a slice that ends early.
  std::uint64_t predict() const;
  std::uint64_t samples() const { return samples_; }

 private:
  double weight_;
  double mean_ = 0;
  double deviation_ = 0;
  std::uint64_t samples_ = 0;
};

}  // namespace eacgm::govern
