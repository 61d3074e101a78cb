// CaptureRecorder: on-demand captures over a running trace. A capture arms one process
// in the BPF `capture_pids` map, so that its calls of counted probes come as per-call
// records for the window, and this consumer, on the reader thread, keeps that process's
// calls, GPU passes and Python samples until the capture ends. Its calls still reach the
// other consumers as calls, not counts: every call is seen once, counted or recorded.
// It outlives the traces of a daemon's reloads (each agent hands it its session's switch).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "core/capture.h"
#include "core/clock.h"
#include "core/consumer.h"
#include "core/result.h"

namespace eacgm::agent {

class CaptureRecorder final : public Consumer, public CaptureControl {
 public:
  // Arms (true) or disarms (false) one process in the running trace.
  using Switch = std::function<Status(std::uint32_t pid, bool armed)>;
  // How long after disarming the reader is waited for (its rounds: poll_timeout_ms).
  static constexpr std::chrono::milliseconds kDrainWait{5000};
  // Calls returning up to this long after the window still arrive in it.
  static constexpr std::uint64_t kDrainMarginNs = 50'000'000;

  explicit CaptureRecorder(Limits limits = Limits{});

  // The running trace's switch, set once its session runs and cleared (null) before it
  // stops; the captures running are armed again in a new trace.
  void set_switch(Switch arm);

  CaptureResult capture(std::uint32_t pid, std::chrono::milliseconds window,
                        const std::atomic<bool>& cancel) override;

  void on_calls(std::span<const CallEvent> calls) override;
  void on_gpu(const GpuSnapshot& snapshot) override;
  void on_python_stacks(std::span<const PythonStack> stacks) override;
  void flush() override;

 private:
  struct Active {
    CapturedWindow window;
    std::uint64_t begin_wall_ns = 0;
    std::uint64_t end_wall_ns = ~std::uint64_t{0};  // set when disarmed
    bool ended = false;                             // disarmed: draining
    int drain_rounds = 0;                           // reader rounds seen past the margin
    bool done = false;
  };
  bool in_window(const Active& a, const CallEvent& e) const;

  Limits limits_;
  WallClock wall_;
  std::mutex mutex_;
  std::condition_variable drained_;
  std::map<std::uint32_t, std::shared_ptr<Active>> active_;
  std::atomic<std::size_t> active_count_{0};  // read without the lock on the reader's path
  Switch switch_;
};

}  // namespace eacgm::agent
