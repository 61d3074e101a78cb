// Per-process call summaries: one CallSummary per pid, published copy-on-write.
#include "analysis/process_calls.h"

#include <utility>

namespace eacgm::analysis {

ProcessCalls::ProcessCalls(Options options) : options_(options) {}

CallSummary ProcessCalls::new_summary() const {
  auto made = CallSummary::create(options_.summary);
  return made ? std::move(made).value() : CallSummary{};
}

std::size_t ProcessCalls::live_count() const {
  std::size_t n = 0;
  for (const auto& [pid, s] : processes_) n += s.calls.has_value() ? 1 : 0;
  return n;
}

ProcessCalls::Slot* ProcessCalls::slot_for(std::uint32_t pid) {
  if (last_slot_ != nullptr && pid == last_pid_) {
    last_slot_->dirty = true;
    return last_slot_;
  }
  auto it = processes_.find(pid);
  if (it == processes_.end()) {
    if (processes_.size() >= options_.max_processes && !evict_exited()) return nullptr;
    it = processes_.emplace(pid, Slot{new_summary(), nullptr, true, {}}).first;
  }
  // A call after the process's summary was reduced to its published copy: from that copy.
  if (!it->second.calls) it->second.calls = *it->second.published;
  it->second.dirty = true;
  it->second.gone_since.reset();  // a call: the pid lives (again)
  last_pid_ = pid;
  last_slot_ = &it->second;
  return last_slot_;
}

bool ProcessCalls::current(const std::pair<Clock::time_point, std::uint32_t>& exit) const {
  auto it = processes_.find(exit.second);
  return it != processes_.end() && it->second.gone_since == exit.first;
}

void ProcessCalls::drop_stale_exits() {
  while (!exits_.empty() && !current(exits_.front())) exits_.pop_front();
  // Exits behind a kept one that went stale (let go, or the pid came back): bounded too.
  if (exits_.size() > 2 * options_.max_processes) {
    std::erase_if(exits_, [this](const auto& exit) { return !current(exit); });
  }
}

// At the cap: the process gone the longest makes room, once gone for kMinKeepExited.
bool ProcessCalls::evict_exited() {
  drop_stale_exits();
  if (exits_.empty() || last_seen_now_ - exits_.front().first < kMinKeepExited) return false;
  auto oldest = processes_.find(exits_.front().second);
  exits_.pop_front();
  if (last_slot_ == &oldest->second) last_slot_ = nullptr;
  processes_.erase(oldest);
  ++evicted_;
  return true;
}

void ProcessCalls::add(const CallEvent& event) {
  if (Slot* s = slot_for(event.pid)) {
    s->calls->add(event);
  } else if (!event.tallied) {  // a tallied call overflows with its probe's count
    ++overflow_events_;
  }
}

void ProcessCalls::add(const CallCount& count) {
  if (Slot* s = slot_for(count.pid)) {
    s->calls->add(count);
  } else {
    overflow_events_ += count.calls;
  }
}

void ProcessCalls::add(const CallTimings& timings) {
  if (Slot* s = slot_for(timings.pid)) s->calls->add(timings);
}

void ProcessCalls::sweep(Clock::time_point now, const std::function<bool(std::uint32_t)>& is_alive,
                         std::size_t max_checks) {
  last_seen_now_ = now;
  if (processes_.empty()) return;
  auto it = processes_.lower_bound(sweep_cursor_);
  for (std::size_t checked = 0; checked < max_checks && checked < processes_.size(); ++checked) {
    if (it == processes_.end()) it = processes_.begin();
    Slot& s = it->second;
    if (!s.gone_since) {
      if (!is_alive(it->first)) {
        s.gone_since = now;
        exits_.emplace_back(now, it->first);
        // Not dirty: the view marks it exited and shares the summary it published.
      }
      ++it;
      continue;
    }
    if (now - *s.gone_since >= kKeepExited) {
      if (last_slot_ == &s) last_slot_ = nullptr;
      it = processes_.erase(it);
    } else {
      ++it;
    }
  }
  sweep_cursor_ = it == processes_.end() ? 0 : it->first;
  drop_stale_exits();
}

std::shared_ptr<const ProcessCallsView> ProcessCalls::view() {
  auto v = std::make_shared<ProcessCallsView>();
  v->overflow_events = overflow_events_;
  std::size_t bytes = 0;
  for (auto& [pid, s] : processes_) {
    if (s.dirty || !s.published) {
      s.published = std::make_shared<const CallSummary>(s.calls->frozen());
      s.dirty = false;
    }
    // Gone, and its last calls published: the published copy is all that is kept.
    if (s.gone_since && s.calls) {
      if (last_slot_ == &s) last_slot_ = nullptr;
      s.calls.reset();
    }
    bytes += s.published->heap_bytes() + (s.calls ? s.calls->heap_bytes() : 0);
    v->processes.emplace(pid, ProcessCallsView::Process{s.published, s.gone_since.has_value()});
  }
  v->bytes = bytes;
  return v;
}

}  // namespace eacgm::analysis
