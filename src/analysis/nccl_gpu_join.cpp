// NcclGpuJoin: NCCL kernels to the calls that launched them.
#include "analysis/nccl_gpu_join.h"

#include <algorithm>
#include <iterator>
#include <limits>

namespace eacgm::analysis {

NcclGpuJoin::Thread& NcclGpuJoin::thread(Key key, std::vector<NcclJoined>& out) {
  auto it = threads_.find(key);
  if (it != threads_.end()) return it->second;
  if (threads_.size() >= options_.max_threads && !threads_.empty()) {
    auto oldest = std::min_element(threads_.begin(), threads_.end(), [](const auto& a, const auto& b) {
      return a.second.last_ns < b.second.last_ns;
    });
    release(oldest->second, std::numeric_limits<std::uint64_t>::max(), out);
    threads_.erase(oldest);
  }
  return threads_.emplace(key, Thread{}).first->second;
}

NcclJoined NcclGpuJoin::join(Thread& t, const NcclKernel& kernel) const {
  NcclJoined out{kernel, {}};
  auto& calls = t.calls;
  // The latest call that began at or before the launch.
  auto latest = calls.end();
  for (auto c = calls.begin(); c != calls.end() && c->ts_ns <= kernel.launch_ns; ++c) latest = c;
  if (latest == calls.end()) return out;
  if (kernel.launch_ns <= latest->end_ns) {
    out.calls.push_back(*latest);
    latest->joined = true;
    return out;
  }
  // After it returned: a group's kernel takes the calls without a kernel that returned
  // within the window before the launch.
  for (auto c = calls.begin(); c != std::next(latest); ++c) {
    if (c->joined || c->end_ns > kernel.launch_ns ||
        kernel.launch_ns - c->end_ns > options_.group_window_ns) {
      continue;
    }
    out.calls.push_back(*c);
    c->joined = true;
  }
  return out;
}

// Lets go the waiting kernels that a later call (or `before_ns`) shows are complete.
void NcclGpuJoin::release(Thread& t, std::uint64_t before_ns, std::vector<NcclJoined>& out) {
  const std::uint64_t latest_call = t.calls.empty() ? 0 : t.calls.back().ts_ns;
  while (!t.kernels.empty()) {
    const NcclKernel& k = t.kernels.front();
    if (k.launch_ns >= latest_call && k.launch_ns >= before_ns) break;
    out.push_back(join(t, k));
    t.kernels.pop_front();
  }
}

void NcclGpuJoin::add_call(std::uint32_t pid, std::uint32_t tid, const NcclIssuedCall& call,
                           std::vector<NcclJoined>& out) {
  if (options_.max_threads == 0 || options_.max_calls_per_thread == 0) return;
  Thread& t = thread(Key{pid, tid}, out);
  // Kept in entry order (they come in order, but nothing here depends on it).
  auto at = std::upper_bound(t.calls.begin(), t.calls.end(), call.ts_ns,
                             [](std::uint64_t ts, const NcclIssuedCall& c) { return ts < c.ts_ns; });
  at = t.calls.insert(at, call);
  at->joined = false;
  if (t.calls.size() > options_.max_calls_per_thread) {
    // The oldest call goes; kernels that could still join it go first.
    release(t, t.calls[1].ts_ns, out);
    t.calls.pop_front();
  }
  t.last_ns = std::max(t.last_ns, call.end_ns);
  release(t, 0, out);
}

void NcclGpuJoin::add_kernel(std::uint32_t pid, std::uint32_t tid, const NcclKernel& kernel,
                             std::vector<NcclJoined>& out) {
  if (options_.max_threads == 0 || options_.max_kernels_per_thread == 0) {
    out.push_back(NcclJoined{kernel, {}});
    return;
  }
  Thread& t = thread(Key{pid, tid}, out);
  auto at = std::upper_bound(t.kernels.begin(), t.kernels.end(), kernel.launch_ns,
                             [](std::uint64_t ts, const NcclKernel& k) { return ts < k.launch_ns; });
  t.kernels.insert(at, kernel);
  t.last_ns = std::max(t.last_ns, kernel.launch_ns);
  if (t.kernels.size() > options_.max_kernels_per_thread) {
    out.push_back(join(t, t.kernels.front()));
    t.kernels.pop_front();
  }
  release(t, 0, out);
}

void NcclGpuJoin::settle(std::uint64_t before_ns, std::vector<NcclJoined>& out) {
  for (auto& [key, t] : threads_) release(t, before_ns, out);
}

}  // namespace eacgm::analysis
