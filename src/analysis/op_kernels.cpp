// OpKernels: launches attributed to the innermost enclosing PyTorch op on their thread.
#include "analysis/op_kernels.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/work_rule.h"

namespace eacgm::analysis {

namespace {
constexpr std::size_t kMaxPinnedProbes = 4096;
}  // namespace

bool OpKernels::intern(Names& names, const std::string& name, std::size_t cap, std::uint32_t& out) {
  if (auto it = names.index.find(name); it != names.index.end()) {
    out = it->second;
    return true;
  }
  if (names.list.size() >= cap) return false;
  out = static_cast<std::uint32_t>(names.list.size());
  names.list.push_back(name);
  names.index.emplace(name, out);
  return true;
}

const OpKernels::ProbeRole& OpKernels::role_of(const CallEvent& event) {
  const ProbeInfo* probe = event.probe.get();
  if (auto it = by_probe_.find(probe); it != by_probe_.end()) return it->second;
  ProbeRole r;
  if (probe->spec.domain == "torch") {
    r.role = Role::kOp;
    r.op_named = intern(op_names_, probe->function, options_.max_names, r.op);
  } else if (work_of(probe->spec) == GpuWork::kKernel) {
    r.role = Role::kLaunch;
  }
  if (pinned_.size() < kMaxPinnedProbes) {
    pinned_.push_back(event.probe);
    return by_probe_.emplace(probe, r).first->second;
  }
  scratch_ = r;
  return scratch_;
}

OpKernels::Thread* OpKernels::thread(std::uint64_t key, bool make) {
  if (auto it = by_thread_.find(key); it != by_thread_.end()) return &threads_[it->second];
  if (!make) return nullptr;
  std::size_t slot;
  if (threads_.size() < options_.max_threads) {
    slot = threads_.size();
    threads_.emplace_back().ring.resize(std::max<std::size_t>(options_.per_thread, 1));
  } else {
    if (threads_.empty()) return nullptr;
    // Let the least recently active thread go: its unclaimed launches stay unclaimed.
    slot = static_cast<std::size_t>(
        std::min_element(threads_.begin(), threads_.end(),
                         [](const Thread& a, const Thread& b) { return a.last_ts < b.last_ts; }) -
        threads_.begin());
    Thread& old = threads_[slot];
    for (std::size_t i = 0; i < old.size; ++i) {
      if (!old.ring[i].claimed) ++unattributed_;
    }
    by_thread_.erase(old.key);
    old.head = 0;
    old.size = 0;
  }
  threads_[slot].key = key;
  threads_[slot].last_ts = 0;
  by_thread_.emplace(key, slot);
  return &threads_[slot];
}

void OpKernels::add(const CallEvent& event) {
  if (event.probe == nullptr || event.nested || event.captured) return;
  const ProbeRole& r = role_of(event);
  if (r.role == Role::kLaunch && !event.kernel.empty()) {
    add_launch(event);
  } else if (r.role == Role::kOp && event.has_exit) {
    add_op(event, r);
  }
}

void OpKernels::add_launch(const CallEvent& event) {
  std::uint32_t kernel = 0;
  Thread* t = thread((std::uint64_t{event.pid} << 32) | event.tid, true);
  if (t == nullptr || !intern(kernel_names_, event.kernel, options_.max_names, kernel)) {
    ++untracked_;
    return;
  }
  t->last_ts = std::max(t->last_ts, event.ts_ns);
  Launch& slot = t->ring[t->head];
  if (t->size == t->ring.size()) {
    if (!slot.claimed) ++unattributed_;  // the oldest launch makes room
  } else {
    ++t->size;
  }
  slot = Launch{event.ts_ns, kernel, false};
  t->head = (t->head + 1) % t->ring.size();
}

// Launches record their entry; one that entered within the op's call on the op's
// thread was made inside it (calls on one thread nest). An op past the name cap still
// claims its launches (as untracked), so that an enclosing op does not take them.
void OpKernels::add_op(const CallEvent& event, const ProbeRole& role) {
  Thread* t = thread((std::uint64_t{event.pid} << 32) | event.tid, false);
  if (t == nullptr) return;
  const std::uint64_t end = event.ts_ns + event.dur_ns;
  for (std::size_t i = 0; i < t->size; ++i) {
    Launch& l = t->ring[i];
    if (l.claimed || l.ts_ns < event.ts_ns || l.ts_ns > end) continue;
    l.claimed = true;
    const std::uint64_t key = (std::uint64_t{role.op} << 32) | l.kernel;
    auto it = pairs_.find(key);
    if (it == pairs_.end() && role.op_named && pairs_.size() < options_.max_pairs) {
      it = pairs_.emplace(key, 0).first;
    }
    if (!role.op_named || it == pairs_.end()) {
      ++untracked_;
      continue;
    }
    ++it->second;
    ++attributed_;
  }
}

OpKernelSummary OpKernels::summary() const {
  OpKernelSummary s;
  s.attributed = attributed_;
  s.untracked = untracked_;
  s.unattributed = unattributed_;
  for (const Thread& t : threads_) {
    for (std::size_t i = 0; i < t.size; ++i) {
      if (!t.ring[i].claimed) ++s.unattributed;
    }
  }
  std::map<std::uint32_t, OpKernelRow> by_op;
  for (const auto& [key, launches] : pairs_) {
    const auto op = static_cast<std::uint32_t>(key >> 32);
    OpKernelRow& row = by_op[op];
    row.op = op_names_.list[op];
    row.launches += launches;
    row.kernels.push_back({kernel_names_.list[static_cast<std::uint32_t>(key)], launches});
  }
  for (auto& [op, row] : by_op) {
    std::sort(row.kernels.begin(), row.kernels.end(), [](const auto& a, const auto& b) {
      return std::tie(b.launches, a.kernel) < std::tie(a.launches, b.kernel);
    });
    s.ops.push_back(std::move(row));
  }
  std::sort(s.ops.begin(), s.ops.end(), [](const auto& a, const auto& b) {
    return std::tie(b.launches, a.op) < std::tie(a.launches, b.op);
  });
  return s;
}

}  // namespace eacgm::analysis
