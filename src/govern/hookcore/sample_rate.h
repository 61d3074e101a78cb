// How often the hook times a launch: 1 in `every()` per function (NCCL kernels always),
// which ones (sample_launch), and `every()` adapted once a second so that what timing
// costs the program stays near its budget. The cost counted is the launching threads'
// time spent recording events plus an allowance for the GPU time each event pair takes
// on the stream.
#pragma once

#include <cstdint>

namespace eacgm::govern {

struct SampleRateConfig {
  std::uint32_t initial = 16;
  std::uint32_t min_every = 1;
  std::uint32_t max_every = 1u << 16;
  double budget = 0.002;  // the share of wall time timing may cost (0.2%)
  // Allowance per timed launch for its two events on the GPU: what a pair delays a stream
  // that is kept busy (the GPU drains the kernel before each timestamp), 4.3 us on the H200
  // (bench/programs/event_pair_cost, 20 us kernels back to back).
  std::uint64_t gpu_cost_ns = 4300;
};

// Whether a function's launch number `n` (0 first) is timed at 1 in `every`: one launch
// in each block of `every` consecutive launches, at an offset drawn from the block's
// number and the function (the first launch is always timed). Exactly the rate, and never
// in step with a program's own period: a fixed 1 in 16 would time the same one of a
// kernel's four shapes in every step.
inline bool sample_launch(std::uint64_t n, std::uint64_t function, std::uint32_t every) {
  if (every <= 1 || n == 0) return true;
  const std::uint64_t block = n / every;
  if (block == 0) return false;
  std::uint64_t z = block * 0x9e3779b97f4a7c15ull ^ function;  // splitmix64
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return n % every == z % every;
}

class SampleRate {
 public:
  explicit SampleRate(SampleRateConfig c = {}) : c_(c), every_(clamp(c.initial)) {}
  std::uint32_t every() const { return every_; }
  // One adaptation step over `wall_ns` of time in which `timed` launches were timed and
  // the launching threads spent `cost_ns` timing them. Over the budget, multiplies `every`
  // by the power of two (2 to 64) that would have kept it within; under a quarter of it,
  // halves `every`.
  std::uint32_t adapt(std::uint64_t wall_ns, std::uint64_t timed, std::uint64_t cost_ns);

 private:
  std::uint32_t clamp(std::uint32_t v) const;
  SampleRateConfig c_;
  std::uint32_t every_;
};

}  // namespace eacgm::govern
