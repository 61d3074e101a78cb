#include "pybind/call_queue.h"

#include <algorithm>

namespace eacgm::pybind {

std::uint32_t CallQueue::probe_index(const std::shared_ptr<const ProbeInfo>& probe) {
  auto it = index_.find(probe.get());
  if (it != index_.end()) return it->second;
  ProbeEntry entry;
  if (probe) {
    entry.function = probe->function;
    entry.domain = probe->spec.domain;
    entry.symbol = probe->symbol;
    entry.library = probe->library;
    for (const auto& a : probe->spec.args) {
      entry.arg_names.push_back(a.name);
      entry.arg_signed.push_back(a.format == ArgFormat::kSigned);
    }
  }
  auto index = static_cast<std::uint32_t>(probes_.size());
  probes_.push_back(std::move(entry));
  held_.push_back(probe);
  index_.emplace(probe.get(), index);
  return index;
}

void CallQueue::on_calls(std::span<const CallEvent> calls) {
  if (calls.empty()) return;
  {
    std::lock_guard lock(mu_);
    if (head_ > 0 && head_ * 2 >= queue_.size()) {
      queue_.erase(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    for (const auto& e : calls) {
      if (queue_.size() - head_ >= capacity_) {
        ++dropped_;
        continue;
      }
      CallRecord& r = queue_.emplace_back();
      r.ts_ns = e.ts_ns;
      r.dur_ns = e.dur_ns;
      r.pid = e.pid;
      r.tid = e.tid;
      r.probe = probe_index(e.probe);
      r.nargs = e.nargs;
      r.nested = e.nested ? 1 : 0;
      r.has_exit = e.has_exit ? 1 : 0;
      r.fault_mask = e.fault_mask;
      r.ret = e.ret;
      r.args = e.args;
      r.comm = e.comm;
    }
  }
  ready_.notify_all();
}

void CallQueue::on_end(const CounterValues& counters) {
  (void)counters;
  finish();
}

void CallQueue::finish() {
  {
    std::lock_guard lock(mu_);
    ended_ = true;
  }
  ready_.notify_all();
}

std::vector<CallRecord> CallQueue::take(std::size_t max, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  ready_.wait_for(lock, timeout, [this] { return queue_.size() > head_ || ended_; });
  std::size_t n = std::min(max, queue_.size() - head_);
  auto first = queue_.begin() + static_cast<std::ptrdiff_t>(head_);
  std::vector<CallRecord> out(first, first + static_cast<std::ptrdiff_t>(n));
  head_ += n;
  if (head_ == queue_.size()) {
    queue_.clear();
    head_ = 0;
  }
  return out;
}

std::vector<ProbeEntry> CallQueue::probes() const {
  std::lock_guard lock(mu_);
  return probes_;
}

std::uint64_t CallQueue::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

bool CallQueue::drained() const {
  std::lock_guard lock(mu_);
  return ended_ && queue_.size() == head_;
}

}  // namespace eacgm::pybind
