// The stuck threads' Python stacks (ingest/stuck_stacks.h).
#include "ingest/stuck_stacks.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "core/clock.h"

namespace eacgm::ingest {

std::shared_ptr<const PythonStack> StuckStacks::read(const InflightCall& call, const eacgm_py_proc& proc) {
  const RemoteRead memory = memory_(call.call.pid);
  const ThreadStackStatus status = read_thread_stack(memory, proc, call.call.pid, call.call.tid, scratch_);
  switch (status) {
    case ThreadStackStatus::kRead:
      break;
    case ThreadStackStatus::kUnreadable:
      ++counters_.unreadable;
      return nullptr;
    case ThreadStackStatus::kNoThread:
    case ThreadStackStatus::kAmbiguous:
      ++counters_.unknown;
      return nullptr;
  }
  scratch_.ts_ns = monotonic_ns();
  // The stack ends in the call the thread waits in, as a sample taken inside it does.
  if (call.call.probe) {
    scratch_.flags |= EACGM_PY_IN_CALL;
    scratch_.call_probe = call.call.probe->id;
  }
  std::memset(scratch_.comm, 0, sizeof(scratch_.comm));
  std::copy_n(call.call.comm.data(), std::min(call.call.comm.size(), sizeof(scratch_.comm) - 1),
              scratch_.comm);
  auto stack = std::make_shared<PythonStack>();
  if (!decoder_.decode(&scratch_, EACGM_PY_SAMPLE_SIZE(scratch_.depth), *stack, true)) {
    ++counters_.unknown;  // an interpreter version the decoder does not know
    return nullptr;
  }
  ++counters_.read;
  if (stack->frames.empty()) return nullptr;  // no Python frame (a C thread with a thread state)
  return stack;
}

void StuckStacks::attach(std::vector<InflightCall>& calls, std::uint64_t scan_mono_ns) {
  std::map<Key, std::shared_ptr<const PythonStack>> kept;
  std::vector<InflightCall*> unread;
  for (InflightCall& c : calls) {
    const std::uint64_t age = scan_mono_ns > c.entry_mono_ns ? scan_mono_ns - c.entry_mono_ns : 0;
    if (age < options_.min_age_ns) continue;
    const Key key{c.call.tid, c.entry_mono_ns};
    if (auto it = kept_.find(key); it != kept_.end()) {
      c.python_stack = it->second;
      kept.insert(kept_.extract(it));
    } else {
      unread.push_back(&c);
    }
  }
  // The oldest calls first: the likeliest hangs.
  std::sort(unread.begin(), unread.end(),
            [](const InflightCall* a, const InflightCall* b) { return a->entry_mono_ns < b->entry_mono_ns; });
  const auto start = std::chrono::steady_clock::now();
  std::size_t reads = 0;
  for (InflightCall* c : unread) {
    if (reads == options_.max_reads_per_scan ||
        std::chrono::steady_clock::now() - start > options_.max_read_time) {
      ++counters_.deferred;
      continue;
    }
    std::shared_ptr<const PythonStack> stack;
    if (const auto proc = processes_ ? processes_(c->call.pid) : std::nullopt) {
      ++reads;
      stack = read(*c, *proc);
    }
    c->python_stack = stack;
    kept.emplace(Key{c->call.tid, c->entry_mono_ns}, std::move(stack));
  }
  kept_ = std::move(kept);  // the calls no longer in flight are forgotten
}

}  // namespace eacgm::ingest
