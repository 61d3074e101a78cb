// RollupSeries: per-second rollups of a running trace (calls, errors, calls per domain,
// GPU utilization, GPM activity and memory per GPU) in a fixed ring of the last kSeconds
// seconds, fed on the output thread. The ring is kept in chunks that a published
// RollupView shares: publishing copies kSeconds / kChunkSeconds pointers, and the writer
// copies a chunk (kChunkSeconds points) only when it writes to one that a view holds.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/call_counts.h"
#include "core/call_event.h"
#include "core/gpu_sample.h"

namespace eacgm::analysis {

// The GPM activities a second keeps (ratios 0..1), by index into RollupGpu's arrays.
enum class RollupActivity : std::uint8_t { kSm, kTensor, kDram };

struct RollupGpu {
  static constexpr std::size_t kActivities = 3;
  std::uint32_t index = 0;
  std::uint32_t util_samples = 0;  // readings of utilization in the second
  double util_sum = 0;
  std::uint64_t memory_used_bytes = 0;  // the last reading of the second
  // Sums of the second's GPM readings and their number (none: no GPM). Floats and 16-bit
  // counts keep the point, which a chunk copy moves 60 at a time, at 40 bytes a GPU.
  std::array<float, kActivities> activity_sum{};
  std::array<std::uint16_t, kActivities> activity_samples{};
  bool has_memory = false;

  // The mean of the second's readings; absent without one.
  std::optional<double> activity(RollupActivity a) const;
};

struct RollupPoint {
  static constexpr std::size_t kMaxDomains = 16;  // further domains count under the last slot
  static constexpr std::size_t kMaxGpus = 16;     // further GPUs are left out
  std::int64_t t = -1;                            // Unix seconds; -1: an empty slot
  std::uint64_t calls = 0;                        // nested calls left out
  std::uint64_t errors = 0;
  std::array<std::uint64_t, kMaxDomains> domains{};  // by RollupView::domains index
  std::uint8_t gpu_count = 0;
  std::array<RollupGpu, kMaxGpus> gpus{};
};

// An immutable view of the ring, for readers on any thread.
class RollupView {
 public:
  static constexpr std::size_t kSeconds = 3600;
  static constexpr std::size_t kChunkSeconds = 60;
  static constexpr std::size_t kChunks = kSeconds / kChunkSeconds;
  using Chunk = std::array<RollupPoint, kChunkSeconds>;

  // The seconds in (end - window, end] that have data, oldest first.
  std::vector<RollupPoint> points(std::int64_t end, std::size_t window) const;
  const std::vector<std::string>& domains() const { return domains_; }
  std::int64_t latest() const { return latest_; }

 private:
  friend class RollupSeries;
  std::array<std::shared_ptr<const Chunk>, kChunks> chunks_{};
  std::vector<std::string> domains_;
  std::int64_t latest_ = -1;
};

// The seconds of one window as a reader gets them: from a snapshot's ring (see
// series_window in analysis/live_analysis.h), or from a store.
struct SeriesWindow {
  std::chrono::system_clock::time_point time;  // when the snapshot it came from was made
  std::uint64_t sequence = 0;                  // that snapshot's
  std::size_t window_s = 0;
  std::vector<std::string> domains;  // the names of RollupPoint::domains' slots
  std::vector<RollupPoint> points;   // the seconds that have data, oldest first
};

class RollupSeries {
 public:
  RollupSeries();
  void add(const CallEvent& event);
  // Calls counted in the kernel (always-on), filed under the second they were read in.
  void add(const CallCount& count, std::int64_t unix_s);
  void add(const GpuSnapshot& snapshot);
  // Shares the ring's chunks with the returned view; later writes copy a shared chunk.
  RollupView view();

 private:
  RollupPoint* point(std::int64_t t);  // nullptr: older than the ring
  std::size_t domain_index(std::string_view domain);

  std::array<std::shared_ptr<RollupView::Chunk>, RollupView::kChunks> chunks_;
  std::array<bool, RollupView::kChunks> shared_{};
  std::vector<std::string> domains_;
  std::int64_t latest_ = -1;
  const ProbeInfo* last_probe_ = nullptr;
  std::size_t last_domain_ = 0;
};

}  // namespace eacgm::analysis
