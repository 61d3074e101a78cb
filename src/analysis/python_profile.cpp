// Aggregation of sampled Python stacks in bounded slices, and their rows and folded lines.
#include "analysis/python_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace eacgm::analysis {
namespace {

using NameKey = std::tuple<std::string, std::string, int>;
using LineKey = std::tuple<std::string, std::string, int, std::string>;  // and the call

// Code objects with the same name, file and first line are one function (a function
// defined again, a module reloaded): their rows are merged.
void merge_into(std::map<NameKey, PythonFunctionRow>& rows, const PythonCode& code, std::uint64_t self,
                std::uint64_t total) {
  auto& r = rows[NameKey{code.function, code.file, code.first_line}];
  r.function = code.function;
  r.file = code.file;
  r.line = code.first_line;
  r.native = code.native;
  r.self += self;
  r.total += total;
}

std::vector<PythonFunctionRow> sorted_rows(std::map<NameKey, PythonFunctionRow>&& rows) {
  std::vector<PythonFunctionRow> out;
  out.reserve(rows.size());
  for (auto& [key, row] : rows) out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(), [](const PythonFunctionRow& a, const PythonFunctionRow& b) {
    return std::tie(b.self, b.total) < std::tie(a.self, a.total);
  });
  return out;
}

// A thread's rows over every slice that holds it.
struct ThreadSum {
  std::uint64_t samples = 0, python_samples = 0;
  std::map<NameKey, PythonFunctionRow> functions;
};

}  // namespace

std::string folded_frame(const PythonCode& code) {
  std::string out =
      code.native ? code.function : fmt::format("{} ({}:{})", code.function, code.file, code.first_line);
  // A line per stack, frames split by ';': neither may appear in a frame (a name read
  // from memory freed meanwhile may hold anything).
  for (char& c : out) {
    if (c == ';') c = ':';
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

std::string folded_text(const PythonHotSpots& hot, std::optional<std::uint32_t> pid) {
  std::string out;
  for (const auto& f : hot.folded) {
    if (!pid || f.pid == *pid) out += fmt::format("{} {}\n", f.stack, f.samples);
  }
  return out;
}

PythonProfileLimits python_profile_limits(std::uint32_t window_s, std::uint32_t max_rows,
                                          std::uint32_t max_stacks, bool windowed) {
  PythonProfileLimits l;
  l.window_ns = windowed ? std::uint64_t{window_s} * 1000000000 : 0;
  l.max_rows = max_rows;
  l.max_stacks = max_stacks;
  return l;
}

PythonProfile::PythonProfile(std::uint32_t hz, PythonProfileLimits limits) : hz_(hz) { set_limits(limits); }

void PythonProfile::set_limits(const PythonProfileLimits& limits) {
  limits_ = limits;
  limits_.slices = std::max<std::size_t>(limits_.slices, 1);
}

PythonProfile::Slice& PythonProfile::slice_for(std::uint64_t ts_ns) {
  if (limits_.window_ns == 0) {
    if (slices_.empty()) slices_.emplace_back();
    return slices_.back();
  }
  // Samples come about in time order (CPUs' records interleave by at most a poll): one
  // a little older than the newest slice's start goes into that slice.
  const std::uint64_t len = std::max<std::uint64_t>(limits_.window_ns / limits_.slices, 1);
  if (slices_.empty() || ts_ns >= slices_.back().start_ns + len) {
    expire(ts_ns);
    slices_.emplace_back();
    slices_.back().start_ns = ts_ns - ts_ns % len;
  }
  return slices_.back();
}

void PythonProfile::expire(std::uint64_t now_ns) {
  if (limits_.window_ns == 0) return;
  while (!slices_.empty() && slices_.front().start_ns + limits_.window_ns <= now_ns) {
    const Slice& s = slices_.front();
    rows_ -= s.rows;
    stacks_ -= s.stacks;
    for (const auto& [pid, p] : s.processes) {
      auto it = process_slices_.find(pid);
      if (it != process_slices_.end() && --it->second == 0) process_slices_.erase(it);
    }
    slices_.pop_front();
    ++changes_;
  }
}

PythonProfile::Thread* PythonProfile::thread_of(Slice& slice, Process& p, std::uint32_t tid) {
  auto it = p.threads.find(tid);
  if (it != p.threads.end()) return &it->second;
  if (!take_row(slice)) {
    ++over_cap_.rows;
    return nullptr;
  }
  return &p.threads[tid];
}

bool PythonProfile::take_row(Slice& slice) {
  if (rows_ >= limits_.max_rows) return false;
  ++rows_;
  ++slice.rows;
  return true;
}

void PythonProfile::add(const PythonStack& stack) {
  ++changes_;
  Slice& slice = slice_for(stack.ts_ns);
  auto pit = slice.processes.find(stack.pid);
  if (pit == slice.processes.end()) {
    if (!process_slices_.contains(stack.pid) && process_slices_.size() >= limits_.max_processes) {
      ++over_cap_.processes;
      return;
    }
    ++process_slices_[stack.pid];
    pit = slice.processes.emplace(stack.pid, Process{}).first;
  }
  Process& p = pit->second;
  p.comm = stack.comm;
  ++p.samples;
  p.truncated += stack.truncated;
  Thread* t = thread_of(slice, p, stack.tid);
  if (t == nullptr) return;
  ++t->samples;
  if (stack.frames.empty()) return;
  ++t->python_samples;
  add_frames(slice, p, *t, stack);
}

void PythonProfile::add_frames(Slice& slice, Process& p, Thread& t, const PythonStack& stack) {
  seen_.clear();
  path_.clear();
  bool row_dropped = false;
  auto new_row = [&] {
    if (take_row(slice)) return true;
    row_dropped = true;
    return false;
  };
  // A native frame (the traced call the thread was in) is the innermost; the line row is
  // the innermost Python frame's, with that call.
  const PythonFrame* call = stack.frames[0].code && stack.frames[0].code->native ? &stack.frames[0] : nullptr;
  const std::size_t leaf = call != nullptr ? 1 : 0;
  for (std::size_t i = 0; i < stack.frames.size(); ++i) {
    const PythonFrame& f = stack.frames[i];
    if (!f.code) continue;
    const PythonCode* key = f.code.get();
    auto it = t.functions.find(key);
    if (it == t.functions.end()) {
      if (!new_row()) continue;
      it = t.functions.emplace(key, Counts{f.code, 0, 0}).first;
    }
    if (i == 0) ++it->second.self;
    if (i == leaf) {
      const auto line_key = std::tuple{key, f.line, call != nullptr ? call->code.get() : nullptr};
      auto line = t.lines.find(line_key);
      if (line != t.lines.end()) {
        ++line->second.self;
      } else if (new_row()) {
        t.lines.emplace(line_key, LineCounts{f.code, call != nullptr ? call->code : nullptr, 1});
      }
    }
    // Recursion puts a function on the stack more than once; it counts once per sample.
    if (std::find(seen_.begin(), seen_.end(), key) == seen_.end()) {
      seen_.push_back(key);
      ++it->second.total;
    }
  }
  over_cap_.rows += row_dropped;
  for (auto f = stack.frames.rbegin(); f != stack.frames.rend(); ++f) {
    if (f->code) path_.push_back(f->code.get());
  }
  auto s = p.stacks.find(path_);
  if (s != p.stacks.end()) {
    ++s->second;
    return;
  }
  if (stacks_ >= limits_.max_stacks) {
    ++p.stacks_over_cap;
    ++over_cap_.stacks;
    return;
  }
  ++stacks_;
  ++slice.stacks;
  p.stacks.emplace(path_, 1);
  for (const PythonFrame& f : stack.frames) {
    if (f.code) p.keep.emplace(f.code.get(), f.code);
  }
}

PythonHotSpots PythonProfile::hot_spots() const {
  PythonHotSpots hot;
  hot.hz = hz_;
  hot.window_ns = limits_.window_ns;
  hot.changes = changes_;
  hot.over_cap = over_cap_;
  // Each code's folded frame, made once (codes recur across stacks and slices).
  std::unordered_map<const PythonCode*, std::string> frames;
  // Each process's parts, one per slice that holds it.
  std::map<std::uint32_t, std::vector<const Process*>> parts;
  for (const Slice& s : slices_) {
    for (const auto& [pid, p] : s.processes) parts[pid].push_back(&p);
  }
  for (const auto& [pid, ps] : parts) {
    PythonProcessRow row;
    row.pid = pid;
    row.comm = ps.back()->comm;
    std::map<std::uint32_t, ThreadSum> threads;
    std::map<NameKey, PythonFunctionRow> merged;
    std::map<LineKey, PythonLineRow> lines;
    std::map<std::vector<const PythonCode*>, std::uint64_t> stacks;
    std::uint64_t stacks_over_cap = 0;
    for (const Process* p : ps) {
      row.samples += p->samples;
      row.truncated += p->truncated;
      stacks_over_cap += p->stacks_over_cap;
      for (const auto& [tid, t] : p->threads) {
        ThreadSum& sum = threads[tid];
        sum.samples += t.samples;
        sum.python_samples += t.python_samples;
        for (const auto& [key, c] : t.functions) {
          merge_into(sum.functions, *c.code, c.self, c.total);
          merge_into(merged, *c.code, c.self, c.total);
        }
        for (const auto& [key, v] : t.lines) {
          const std::string call = v.call ? v.call->function : std::string();
          auto& l = lines[LineKey{v.code->function, v.code->file, std::get<1>(key), call}];
          l.function = v.code->function;
          l.file = v.code->file;
          l.line = std::get<1>(key);
          l.call = call;
          l.self += v.self;
        }
      }
      for (const auto& [path, n] : p->stacks) stacks[path] += n;
    }
    for (auto& [tid, sum] : threads) {
      row.python_samples += sum.python_samples;
      row.threads.push_back(
          PythonThreadRow{tid, sum.samples, sum.python_samples, sorted_rows(std::move(sum.functions))});
    }
    row.functions = sorted_rows(std::move(merged));
    for (auto& [key, l] : lines) row.lines.push_back(std::move(l));
    std::stable_sort(row.lines.begin(), row.lines.end(),
                     [](const PythonLineRow& a, const PythonLineRow& b) { return b.self < a.self; });
    std::stable_sort(
        row.threads.begin(), row.threads.end(),
        [](const PythonThreadRow& a, const PythonThreadRow& b) { return b.samples < a.samples; });
    // Folded lines: a root frame names the process; equal lines (merged functions) add up.
    const std::string root = fmt::format("{} ({})", row.comm, pid);
    std::map<std::string, std::uint64_t> folded;
    for (const auto& [path, n] : stacks) {
      std::string line = root;
      for (const PythonCode* c : path) {
        auto [frame, added] = frames.try_emplace(c);
        if (added) frame->second = folded_frame(*c);
        line += ';';
        line += frame->second;
      }
      folded[line] += n;
    }
    if (stacks_over_cap > 0) folded[root + ";[stacks past the cap]"] += stacks_over_cap;
    hot.stacks_over_cap += stacks_over_cap;
    for (auto& [stack, n] : folded) hot.folded.push_back(PythonFoldedStack{pid, stack, n});
    hot.samples += row.samples;
    hot.processes.push_back(std::move(row));
  }
  std::stable_sort(
      hot.processes.begin(), hot.processes.end(),
      [](const PythonProcessRow& a, const PythonProcessRow& b) { return b.samples < a.samples; });
  std::sort(hot.folded.begin(), hot.folded.end(),
            [](const PythonFoldedStack& a, const PythonFoldedStack& b) { return a.stack < b.stack; });
  return hot;
}

}  // namespace eacgm::analysis
