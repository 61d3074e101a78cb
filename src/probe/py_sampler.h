// The loaded Python stack sampler (bpf/py_sample.bpf.c): its skeleton, one software
// CPU-clock perf event per CPU that runs it, the map of Python processes it samples, and
// its ring buffer and counters. RAII throughout.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bpf/py_sample.h"
#include "core/result.h"
#include "probe/bpf_link.h"

struct py_sample_bpf;

namespace eacgm::probe {

struct PySamplerOptions {
  std::uint32_t hz = 99;  // samples per second on each CPU (a prime, away from timer ticks)
  std::uint32_t ringbuf_bytes = 1u << 20;
  std::string btf_path;  // custom kernel BTF; empty: /sys/kernel/btf/vmlinux
  // The tracer's map of the waiting call each thread is in (BpfTracer::calls_in_flight_fd),
  // so that stacks end in the traced call a thread waits in; -1: none (an empty map of
  // its own).
  int calls_in_flight_fd = -1;
};

// Kernel-side counters of the sampler, summed over CPUs (bpf/py_sample.h).
struct PySamplerCounters {
  std::uint64_t samples = 0;       // samples of registered processes
  std::uint64_t drops = 0;         // lost: the ring buffer was full
  std::uint64_t no_thread = 0;     // of threads with no Python thread state
  std::uint64_t thread_walks = 0;  // thread-state searches (cache misses)
};

class PySampler {
 public:
  // Loads the program and starts sampling every CPU (it does nothing until a process
  // is added). Errors say what failed and what to do.
  static Result<std::unique_ptr<PySampler>> open(const PySamplerOptions& options);
  ~PySampler();
  PySampler(const PySampler&) = delete;
  PySampler& operator=(const PySampler&) = delete;

  // Samples a process's threads from now on (replacing what was known of it).
  Status add_process(std::uint32_t pid, const eacgm_py_proc& proc);
  // Stops sampling it (exec'd into something else, or gone).
  void remove_process(std::uint32_t pid);
  // The PyCode_Type address the sampler checks a process's frames against; 0 when it does
  // not sample the process. Safe on any thread (a map lookup).
  std::uint64_t code_type(std::uint32_t pid) const;
  // What the sampler reads a process by, as add_process gave it (the runtime's address,
  // PyCode_Type's, the layout); nullopt when it does not sample the process. Safe on any
  // thread (a map lookup).
  std::optional<eacgm_py_proc> process(std::uint32_t pid) const;
  int ringbuf_fd() const;
  PySamplerCounters counters() const;
  std::uint32_t hz() const { return hz_; }
  std::size_t cpus() const { return links_.size(); }

 private:
  PySampler() = default;
  py_sample_bpf* skel_ = nullptr;
  std::vector<BpfLink> links_;  // one per online CPU, each owning its perf event
  std::uint32_t hz_ = 0;
};

}  // namespace eacgm::probe
