// What timing a launch with a CUDA event pair costs the launching thread, on the driver
// alone (no hook, no agent): one thread launches a short kernel in a loop on its stream,
// in rounds that rotate through four ways of timing 1 launch in EVERY as the hook does
// (govern/hook/gpu_timer.cpp):
//   plain    no timing
//   pair     cuStreamIsCapturing, cuCtxGetCurrent, cuEventRecord before, the launch,
//            cuEventRecord after, cuEventQuery of the start event (queued or idle)
//   noquery  the same without the cuEventQuery
//   reader   pair, and a second thread that every POLL_MS reads the pairs back as the
//            hook's timing thread does (cuEventQuery of the end event, two
//            cuEventElapsedTime)
// Per way: the round's wall time per launch (the stream drained at its end), the timed
// launch's own time, and the mean time of the 1st, 2nd, 3rd-4th and 5th-16th launch after
// a timed one, against plain launches: whether a pair slows the launches that follow it.
//
// `--legacy 1`: the loop launches on the legacy default stream (stream 0, PyTorch's
// default) rather than a non-blocking stream of its own.
//
// Usage: event_pair_cost [--launches N] [--rounds R] [--every E] [--kernel-ns K] [--poll-ms P]
//                        [--legacy 0|1]
#include <cuda.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "govern/hook/gap_kernels_ptx.h"

namespace {

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* text = nullptr;
  cuGetErrorString(r, &text);
  std::fprintf(stderr, "event_pair_cost: %s failed: %s\n", what, text != nullptr ? text : "?");
  std::exit(1);
}

enum Way { kPlain, kPair, kNoQuery, kReader, kWays };
const char* const kWayNames[kWays] = {"plain", "pair", "noquery", "reader"};

struct Pair {
  CUevent start, end;
};

// The pairs recorded and not yet read back, and the events free for reuse.
struct Pool {
  std::mutex mu;
  std::vector<Pair> pending;
  std::vector<Pair> free;
  Pair take() {
    std::lock_guard<std::mutex> lock(mu);
    if (free.empty()) {
      Pair p{};
      check(cuEventCreate(&p.start, CU_EVENT_DEFAULT), "cuEventCreate");
      check(cuEventCreate(&p.end, CU_EVENT_DEFAULT), "cuEventCreate");
      return p;
    }
    Pair p = free.back();
    free.pop_back();
    return p;
  }
  void add(Pair p) {
    std::lock_guard<std::mutex> lock(mu);
    pending.push_back(p);
  }
  void release_all() {
    std::lock_guard<std::mutex> lock(mu);
    free.insert(free.end(), pending.begin(), pending.end());
    pending.clear();
  }
};

// The hook's timing thread's work: every `poll_ms`, the pairs the GPU has passed read back.
void reader(CUcontext ctx, Pool& pool, CUevent anchor, const std::atomic<bool>& stop, long poll_ms,
            std::atomic<std::uint64_t>& read) {
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  std::vector<Pair> batch;
  while (!stop.load(std::memory_order_acquire)) {
    timespec nap{poll_ms / 1000, (poll_ms % 1000) * 1000000};
    nanosleep(&nap, nullptr);
    {
      std::lock_guard<std::mutex> lock(pool.mu);
      batch.swap(pool.pending);
    }
    std::vector<Pair> kept;
    for (const Pair& p : batch) {
      if (cuEventQuery(p.end) == CUDA_ERROR_NOT_READY) {
        kept.push_back(p);
        continue;
      }
      float ms = 0;
      cuEventElapsedTime(&ms, p.start, p.end);
      cuEventElapsedTime(&ms, anchor, p.start);
      read.fetch_add(1, std::memory_order_relaxed);
      std::lock_guard<std::mutex> lock(pool.mu);
      pool.free.push_back(p);
    }
    batch.clear();
    std::lock_guard<std::mutex> lock(pool.mu);
    pool.pending.insert(pool.pending.begin(), kept.begin(), kept.end());
  }
}

struct Tally {
  double wall_ns = 0, launches = 0;
  double timed_ns = 0, timed = 0;
  double after_ns[4] = {}, after[4] = {};  // 1st, 2nd, 3rd-4th, 5th-16th after a timed launch
  double untimed_ns = 0, untimed = 0;      // every launch that is not timed
};

int after_bucket(long since) {
  if (since == 1) return 0;
  if (since == 2) return 1;
  if (since <= 4) return 2;
  if (since <= 16) return 3;
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  long launches = 20000, rounds = 10, every = 32, poll_ms = 5, legacy = 0;
  unsigned long long kernel_ns = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--launches"))
      launches = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rounds"))
      rounds = std::atol(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--every"))
      every = std::max(1L, std::atol(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--kernel-ns"))
      kernel_ns = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--poll-ms"))
      poll_ms = std::max(1L, std::atol(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--legacy"))
      legacy = std::atol(argv[i + 1]);
    else {
      std::fprintf(stderr, "event_pair_cost: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  check(cuInit(0), "cuInit");
  CUdevice dev = 0;
  check(cuDeviceGet(&dev, 0), "cuDeviceGet");
  CUcontext ctx = nullptr;
  check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUmodule module = nullptr;
  check(cuModuleLoadData(&module, eacgm::govern::hook::kGapKernelsPtx), "cuModuleLoadData");
  CUfunction spin = nullptr;
  check(cuModuleGetFunction(&spin, module, "eacgm_spin"), "cuModuleGetFunction");
  CUstream stream = nullptr, own = nullptr;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check(cuStreamCreate(&own, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  if (legacy != 0) stream = nullptr;
  CUevent anchor = nullptr;
  check(cuEventCreate(&anchor, CU_EVENT_DEFAULT), "cuEventCreate");
  check(cuEventRecord(anchor, own), "cuEventRecord");
  check(cuEventSynchronize(anchor), "cuEventSynchronize");
  void* args[] = {&kernel_ns};
  auto launch = [&] {
    check(cuLaunchKernel(spin, 1, 1, 1, 32, 1, 1, 0, stream, args, nullptr), "cuLaunchKernel");
  };
  for (int i = 0; i < 2000; ++i) launch();  // warm up
  check(cuStreamSynchronize(stream), "cuStreamSynchronize");

  Pool pool;
  Tally tally[kWays];
  std::atomic<std::uint64_t> read{0};
  for (long r = 0; r < rounds; ++r) {
    for (int w = 0; w < kWays; ++w) {
      const Way way = static_cast<Way>((w + r) % kWays);  // rotated: no way always follows another
      Tally& t = tally[way];
      std::atomic<bool> stop{false};
      std::thread poller;
      if (way == kReader)
        poller = std::thread(reader, ctx, std::ref(pool), anchor, std::cref(stop), poll_ms, std::ref(read));
      long since = 1 << 20;
      const std::uint64_t began = now_ns();
      for (long i = 0; i < launches; ++i) {
        const std::uint64_t t0 = now_ns();
        if (way != kPlain && i % every == every / 2) {
          CUstreamCaptureStatus status{};
          CUcontext current = nullptr;
          check(cuStreamIsCapturing(stream, &status), "cuStreamIsCapturing");
          check(cuCtxGetCurrent(&current), "cuCtxGetCurrent");
          Pair p = pool.take();
          check(cuEventRecord(p.start, stream), "cuEventRecord");
          launch();
          check(cuEventRecord(p.end, stream), "cuEventRecord");
          if (way != kNoQuery) (void)cuEventQuery(p.start);
          pool.add(p);
          t.timed_ns += static_cast<double>(now_ns() - t0);
          ++t.timed;
          since = 0;
          continue;
        }
        launch();
        const double d = static_cast<double>(now_ns() - t0);
        ++since;
        t.untimed_ns += d;
        ++t.untimed;
        if (const int b = after_bucket(since); b >= 0 && way != kPlain) {
          t.after_ns[b] += d;
          ++t.after[b];
        }
      }
      check(cuStreamSynchronize(stream), "cuStreamSynchronize");
      t.wall_ns += static_cast<double>(now_ns() - began);
      t.launches += static_cast<double>(launches);
      stop.store(true, std::memory_order_release);
      if (poller.joinable()) poller.join();
      pool.release_all();
    }
  }
  const double plain_wall = tally[kPlain].wall_ns / tally[kPlain].launches;
  const double plain_launch = tally[kPlain].untimed_ns / tally[kPlain].untimed;
  std::printf(
      "kernel %llu ns on %s, 1 launch in %ld timed, %ld rounds of %ld launches per way, poll %ld ms\n",
      kernel_ns, legacy != 0 ? "the legacy stream" : "a stream of its own", every, rounds, launches, poll_ms);
  std::printf("%-8s %9s %8s %9s %9s %9s %9s %9s %9s %10s\n", "way", "wall/launch", "vs plain", "timed",
              "untimed", "after 1", "after 2", "after 3-4", "after 5-16", "cost/timed");
  for (int w = 0; w < kWays; ++w) {
    const Tally& t = tally[w];
    const double wall = t.wall_ns / t.launches;
    auto mean = [](double ns, double n) { return n > 0 ? ns / n : 0.0; };
    // What each timed launch cost the loop in all: the extra wall time over plain per timed launch.
    const double per_timed = t.timed > 0 ? (wall - plain_wall) * t.launches / t.timed : 0;
    std::printf("%-8s %9.0f ns %+7.2f%% %9.0f %9.0f %9.0f %9.0f %9.0f %9.0f %10.0f\n", kWayNames[w], wall,
                100.0 * (wall / plain_wall - 1), mean(t.timed_ns, t.timed), mean(t.untimed_ns, t.untimed),
                mean(t.after_ns[0], t.after[0]), mean(t.after_ns[1], t.after[1]),
                mean(t.after_ns[2], t.after[2]), mean(t.after_ns[3], t.after[3]), per_timed);
  }
  std::printf("plain launch %.0f ns; pairs read back by the reader: %llu\n", plain_launch,
              static_cast<unsigned long long>(read.load()));
  return 0;
}
