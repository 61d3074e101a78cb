// PythonProfile: the Python sampler's stacks aggregated per process and thread: how
// often each function was the running one (self) or anywhere on the stack (total), the
// hottest lines, and the distinct stacks for flame graphs (folded). These are sample
// counts at a fixed rate: shares of on-CPU time, not exact calls or durations.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/python_stack.h"

namespace eacgm::analysis {

struct PythonFunctionRow {
  std::string function;
  std::string file;
  int line = 0;             // the function's first line
  std::uint64_t self = 0;   // samples where it was the innermost frame
  std::uint64_t total = 0;  // samples where it was on the stack (once per sample)
};

struct PythonLineRow {
  std::string function;
  std::string file;
  int line = 0;  // the line running
  std::uint64_t self = 0;
};

struct PythonThreadRow {
  std::uint32_t tid = 0;
  std::uint64_t samples = 0;                 // of this thread, on CPU
  std::uint64_t python_samples = 0;          // of those, with Python frames (the shares' base)
  std::vector<PythonFunctionRow> functions;  // by self, then total, descending
};

struct PythonProcessRow {
  std::uint32_t pid = 0;
  std::string comm;
  std::uint64_t samples = 0;
  std::uint64_t python_samples = 0;
  std::uint64_t truncated = 0;               // stacks deeper than the sampler walks
  std::vector<PythonFunctionRow> functions;  // the threads merged, by self then total
  std::vector<PythonLineRow> lines;          // innermost lines, by self
  std::vector<PythonThreadRow> threads;      // busiest first
};

// What readers see: rows and folded stacks, made from the profile at one moment.
struct PythonHotSpots {
  std::uint32_t hz = 0;  // samples per second on each CPU
  std::uint64_t samples = 0;
  std::vector<PythonProcessRow> processes;  // busiest first
  // "comm (pid);outer (file:line);...;inner (file:line)" and its samples, sorted by stack.
  std::vector<std::pair<std::string, std::uint64_t>> folded;
  std::uint64_t stacks_over_cap = 0;  // samples whose distinct stack was past the cap
};

// One frame in a folded line: "function (file:line)", with ';' (the separator) replaced.
std::string folded_frame(const PythonCode& code);
// Folded stacks as text, one "stack count" line each (flamegraph.pl, speedscope, inferno).
std::string folded_text(const PythonHotSpots& hot);

class PythonProfile {
 public:
  explicit PythonProfile(std::uint32_t hz = 0) : hz_(hz) {}
  void set_hz(std::uint32_t hz) { hz_ = hz; }
  void add(const PythonStack& stack);
  void add(std::span<const PythonStack> stacks) {
    for (const auto& s : stacks) add(s);
  }
  std::uint64_t samples() const { return samples_; }
  // The rows and folded stacks now.
  PythonHotSpots hot_spots() const;

  // Distinct stacks kept per process; samples of further ones are counted apart.
  static constexpr std::size_t kMaxStacksPerProcess = 20000;
  // Distinct (code, line) keys kept per thread.
  static constexpr std::size_t kMaxKeysPerThread = 20000;

 private:
  using CodePtr = std::shared_ptr<const PythonCode>;
  struct Counts {
    CodePtr code;
    std::uint64_t self = 0, total = 0;
  };
  struct Thread {
    std::uint64_t samples = 0, python_samples = 0;
    std::unordered_map<const PythonCode*, Counts> functions;
    std::map<std::pair<const PythonCode*, int>, std::pair<CodePtr, std::uint64_t>> lines;
  };
  struct Process {
    std::string comm;
    std::uint64_t samples = 0, truncated = 0, stacks_over_cap = 0;
    std::map<std::uint32_t, Thread> threads;
    // Outermost first: the order of a folded line.
    std::map<std::vector<const PythonCode*>, std::uint64_t> stacks;
    std::unordered_map<const PythonCode*, CodePtr> keep;  // owners of the codes the stacks name
  };
  std::uint32_t hz_ = 0;
  std::uint64_t samples_ = 0;
  std::map<std::uint32_t, Process> processes_;
  std::vector<const PythonCode*> seen_;  // scratch: codes counted in this sample's total
  std::vector<const PythonCode*> path_;  // scratch: this sample's folded key
};

}  // namespace eacgm::analysis
