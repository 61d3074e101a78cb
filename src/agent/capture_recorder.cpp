// Arms, waits, disarms and drains one capture; keeps the captured process's values on
// the reader thread (agent/capture_recorder.h).
#include "agent/capture_recorder.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

#include "bpf/events.h"

namespace eacgm::agent {

CaptureRecorder::CaptureRecorder(Limits limits) : limits_(limits) {}

void CaptureRecorder::set_switch(Switch arm) {
  std::lock_guard<std::mutex> lock(mutex_);
  switch_ = std::move(arm);
  if (!switch_) return;
  for (auto& [pid, a] : active_) {
    if (!a->ended) (void)switch_(pid, true);
  }
}

bool CaptureRecorder::in_window(const Active& a, const CallEvent& e) const {
  // A counted probe's record exists only because the process was armed (its entry came
  // between armed and disarmed); a per-call probe's is kept by its entry time.
  if (e.probe && e.probe->counted) return true;
  return e.ts_ns >= a.begin_wall_ns && e.ts_ns <= a.end_wall_ns;
}

CaptureResult CaptureRecorder::capture(std::uint32_t pid, std::chrono::milliseconds window,
                                       const std::atomic<bool>& cancel) {
  CaptureResult result;
  auto a = std::make_shared<Active>();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!switch_) {
      result.refusal = CaptureRefusal::kNoTrace;
      result.message = "no trace is running (the agent is starting or reloading): try again";
      return result;
    }
    if (active_.contains(pid)) {
      result.refusal = CaptureRefusal::kBusy;
      result.message = fmt::format("a capture of pid {} is running", pid);
      return result;
    }
    if (active_.size() >= EACGM_MAX_CAPTURES) {
      result.refusal = CaptureRefusal::kTooMany;
      result.message = fmt::format("{} captures are running, the most at once", EACGM_MAX_CAPTURES);
      return result;
    }
    a->window.pid = pid;
    a->window.wall_offset_ns = wall_.offset_ns();
    a->window.begin_ns = monotonic_ns();
    a->begin_wall_ns = wall_.from_monotonic(a->window.begin_ns);
    active_.emplace(pid, a);
    active_count_.fetch_add(1);
    if (auto st = switch_(pid, true); !st) {
      active_.erase(pid);
      active_count_.fetch_sub(1);
      result.refusal = CaptureRefusal::kFailed;
      result.message = st.error();
      return result;
    }
    a->window.armed_ns = monotonic_ns();
  }
  const auto deadline = std::chrono::steady_clock::now() + window;
  while (!cancel.load() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(50), deadline - std::chrono::steady_clock::now()));
  }
  std::unique_lock<std::mutex> lock(mutex_);
  a->window.disarming_ns = monotonic_ns();
  if (switch_) (void)switch_(pid, false);  // without a trace, nothing is armed
  a->window.end_ns = monotonic_ns();
  a->end_wall_ns = wall_.from_monotonic(a->window.end_ns);
  a->ended = true;
  // The reader hands on what it read up to a round begun past the margin after the end.
  a->window.drained = drained_.wait_for(lock, kDrainWait + std::chrono::nanoseconds(kDrainMarginNs), [&] {
    return a->done || cancel.load();
  }) && a->done;
  active_.erase(pid);
  active_count_.fetch_sub(1);
  result.window = std::move(a->window);
  return result;
}

void CaptureRecorder::on_calls(std::span<const CallEvent> calls) {
  if (active_count_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const CallEvent& e : calls) {
    auto it = active_.find(e.pid);
    if (it == active_.end()) continue;
    Active& a = *it->second;
    if (a.done || !in_window(a, e)) continue;
    if (a.window.comm.empty() && e.tid == e.pid) a.window.comm = std::string(e.comm_view());
    if (a.window.calls.size() < limits_.max_calls) {
      a.window.calls.push_back(e);
    } else {
      ++a.window.calls_left_out;
    }
  }
}

void CaptureRecorder::on_gpu(const GpuSnapshot& snapshot) {
  if (active_count_.load(std::memory_order_relaxed) == 0) return;
  const auto at = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(snapshot.time.time_since_epoch()).count());
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [pid, a] : active_) {
    if (a->done || at < a->begin_wall_ns || at > a->end_wall_ns) continue;
    if (a->window.gpus.size() >= limits_.max_gpu_passes) continue;
    GpuSnapshot kept = snapshot;
    std::erase_if(kept.processes, [pid = pid](const ProcessSample& p) { return p.pid != pid; });
    a->window.gpus.push_back(std::move(kept));
  }
}

void CaptureRecorder::on_python_stacks(std::span<const PythonStack> stacks) {
  if (active_count_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const PythonStack& s : stacks) {
    auto it = active_.find(s.pid);
    if (it == active_.end()) continue;
    Active& a = *it->second;
    // Stacks are stamped in CLOCK_MONOTONIC.
    if (a.done || s.ts_ns < a.window.begin_ns || (a.ended && s.ts_ns > a.window.end_ns)) continue;
    if (a.window.stacks.size() < limits_.max_stacks) {
      a.window.stacks.push_back(s);
    } else {
      ++a.window.stacks_left_out;
    }
  }
}

void CaptureRecorder::flush() {
  if (active_count_.load(std::memory_order_relaxed) == 0) return;
  const std::uint64_t now = monotonic_ns();
  bool any = false;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [pid, a] : active_) {
    if (!a->ended || a->done || now < a->window.end_ns + kDrainMarginNs) continue;
    // The first round past the margin may have begun before it: the next one did not.
    if (++a->drain_rounds >= 2) {
      a->done = true;
      any = true;
    }
  }
  if (any) drained_.notify_all();
}

}  // namespace eacgm::agent
