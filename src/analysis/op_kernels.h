// OpKernels: which kernels each PyTorch op launched, from per-call records only. A
// call's record is sent at its exit, so an op's record arrives after the launches it
// made: each thread keeps its recent launches, and an op's record claims those on its
// thread that started inside [its start, its return] (an inner op's record comes first,
// so the innermost op wins).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/call_event.h"

namespace eacgm::analysis {

struct OpKernelCount {
  std::string kernel;
  std::uint64_t launches = 0;
};

struct OpKernelRow {
  std::string op;
  std::uint64_t launches = 0;
  std::vector<OpKernelCount> kernels;  // most launches first, then by name
};

struct OpKernelSummary {
  std::vector<OpKernelRow> ops;    // most launches first, then by name
  std::uint64_t attributed = 0;    // launches an op claimed
  std::uint64_t unattributed = 0;  // launches no traced op on their thread enclosed (so far)
  std::uint64_t untracked = 0;     // launches past the caps (threads, names, pairs)
};

class OpKernels {
 public:
  struct Options {
    std::size_t max_threads = 1024;  // threads with launches held; the least recent makes room
    std::size_t per_thread = 256;    // launches held per thread; the oldest makes room
    std::size_t max_names = 4096;    // distinct op names, and distinct kernel names
    std::size_t max_pairs = 16384;   // distinct (op, kernel) pairs
  };
  OpKernels() : OpKernels(Options{}) {}
  explicit OpKernels(const Options& options) : options_(options) {}

  // Takes kernel launches (named, not nested, not recorded into a graph) and `torch`
  // op calls with their exit; anything else is ignored after a lookup by probe.
  void add(const CallEvent& event);

  OpKernelSummary summary() const;

 private:
  enum class Role : std::uint8_t { kNone, kLaunch, kOp };
  struct ProbeRole {
    Role role = Role::kNone;
    std::uint32_t op = 0;   // kOp: index into op_names_
    bool op_named = false;  // kOp: the name fit under max_names
  };
  struct Launch {
    std::uint64_t ts_ns = 0;
    std::uint32_t kernel = 0;
    bool claimed = false;
  };
  struct Thread {
    std::uint64_t key = 0;  // pid << 32 | tid
    std::uint64_t last_ts = 0;
    std::vector<Launch> ring;  // per_thread slots
    std::size_t head = 0;      // next slot to write
    std::size_t size = 0;
  };
  struct Names {
    std::vector<std::string> list;
    std::unordered_map<std::string, std::uint32_t> index;
  };

  const ProbeRole& role_of(const CallEvent& event);
  Thread* thread(std::uint64_t key, bool make);
  static bool intern(Names& names, const std::string& name, std::size_t cap, std::uint32_t& out);
  void add_launch(const CallEvent& event);
  void add_op(const CallEvent& event, const ProbeRole& role);

  Options options_;
  std::unordered_map<const ProbeInfo*, ProbeRole> by_probe_;
  std::vector<std::shared_ptr<const ProbeInfo>> pinned_;
  ProbeRole scratch_;
  std::vector<Thread> threads_;
  std::unordered_map<std::uint64_t, std::size_t> by_thread_;
  Names op_names_, kernel_names_;
  std::unordered_map<std::uint64_t, std::uint64_t> pairs_;  // op << 32 | kernel -> launches
  std::uint64_t attributed_ = 0, unattributed_ = 0, untracked_ = 0;
};

}  // namespace eacgm::analysis
