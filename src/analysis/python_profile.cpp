// Aggregation of sampled Python stacks, and their rows and folded lines.
#include "analysis/python_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace eacgm::analysis {
namespace {

using NameKey = std::tuple<std::string, std::string, int>;

// Code objects with the same name, file and first line are one function (a function
// defined again, a module reloaded): their rows are merged.
void merge_into(std::map<NameKey, PythonFunctionRow>& rows, const PythonCode& code, std::uint64_t self,
                std::uint64_t total) {
  auto& r = rows[NameKey{code.function, code.file, code.first_line}];
  r.function = code.function;
  r.file = code.file;
  r.line = code.first_line;
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

}  // namespace

std::string folded_frame(const PythonCode& code) {
  std::string out = fmt::format("{} ({}:{})", code.function, code.file, code.first_line);
  std::replace(out.begin(), out.end(), ';', ':');
  return out;
}

std::string folded_text(const PythonHotSpots& hot) {
  std::string out;
  for (const auto& [stack, samples] : hot.folded) out += fmt::format("{} {}\n", stack, samples);
  return out;
}

void PythonProfile::add(const PythonStack& stack) {
  ++samples_;
  Process& p = processes_[stack.pid];
  p.comm = stack.comm;
  ++p.samples;
  p.truncated += stack.truncated;
  Thread& t = p.threads[stack.tid];
  ++t.samples;
  if (stack.frames.empty()) return;
  ++t.python_samples;
  seen_.clear();
  path_.clear();
  for (std::size_t i = 0; i < stack.frames.size(); ++i) {
    const PythonFrame& f = stack.frames[i];
    if (!f.code) continue;
    const PythonCode* key = f.code.get();
    auto it = t.functions.find(key);
    if (it == t.functions.end()) {
      if (t.functions.size() >= kMaxKeysPerThread) continue;
      it = t.functions.emplace(key, Counts{f.code, 0, 0}).first;
    }
    if (i == 0) {
      ++it->second.self;
      auto line = t.lines.find({key, f.line});
      if (line != t.lines.end()) {
        ++line->second.second;
      } else if (t.lines.size() < kMaxKeysPerThread) {
        t.lines.emplace(std::pair{key, f.line}, std::pair{f.code, std::uint64_t{1}});
      }
    }
    // Recursion puts a function on the stack more than once; it counts once per sample.
    if (std::find(seen_.begin(), seen_.end(), key) == seen_.end()) {
      seen_.push_back(key);
      ++it->second.total;
    }
  }
  for (auto f = stack.frames.rbegin(); f != stack.frames.rend(); ++f) {
    if (f->code) path_.push_back(f->code.get());
  }
  auto s = p.stacks.find(path_);
  if (s != p.stacks.end()) {
    ++s->second;
    return;
  }
  if (p.stacks.size() >= kMaxStacksPerProcess) {
    ++p.stacks_over_cap;
    return;
  }
  p.stacks.emplace(path_, 1);
  for (const PythonFrame& f : stack.frames) {
    if (f.code) p.keep.emplace(f.code.get(), f.code);
  }
}

PythonHotSpots PythonProfile::hot_spots() const {
  PythonHotSpots hot;
  hot.hz = hz_;
  hot.samples = samples_;
  for (const auto& [pid, p] : processes_) {
    PythonProcessRow row;
    row.pid = pid;
    row.comm = p.comm;
    row.samples = p.samples;
    row.truncated = p.truncated;
    std::map<NameKey, PythonFunctionRow> merged;
    std::map<NameKey, PythonLineRow> lines;
    for (const auto& [tid, t] : p.threads) {
      PythonThreadRow tr;
      tr.tid = tid;
      tr.samples = t.samples;
      tr.python_samples = t.python_samples;
      row.python_samples += t.python_samples;
      std::map<NameKey, PythonFunctionRow> own;
      for (const auto& [key, c] : t.functions) {
        merge_into(own, *c.code, c.self, c.total);
        merge_into(merged, *c.code, c.self, c.total);
      }
      tr.functions = sorted_rows(std::move(own));
      for (const auto& [key, v] : t.lines) {
        auto& l = lines[NameKey{v.first->function, v.first->file, key.second}];
        l.function = v.first->function;
        l.file = v.first->file;
        l.line = key.second;
        l.self += v.second;
      }
      row.threads.push_back(std::move(tr));
    }
    row.functions = sorted_rows(std::move(merged));
    for (auto& [key, l] : lines) row.lines.push_back(std::move(l));
    std::stable_sort(row.lines.begin(), row.lines.end(),
                     [](const PythonLineRow& a, const PythonLineRow& b) { return b.self < a.self; });
    std::stable_sort(
        row.threads.begin(), row.threads.end(),
        [](const PythonThreadRow& a, const PythonThreadRow& b) { return b.samples < a.samples; });
    // Folded lines: a root frame names the process; equal lines (merged functions) add up.
    const std::string root = fmt::format("{} ({})", p.comm, pid);
    std::map<std::string, std::uint64_t> folded;
    for (const auto& [path, n] : p.stacks) {
      std::string line = root;
      for (const PythonCode* c : path) line += ";" + folded_frame(*c);
      folded[line] += n;
    }
    if (p.stacks_over_cap > 0) folded[root + ";[stacks past the cap]"] += p.stacks_over_cap;
    hot.stacks_over_cap += p.stacks_over_cap;
    for (auto& kv : folded) hot.folded.emplace_back(kv.first, kv.second);
    hot.processes.push_back(std::move(row));
  }
  std::stable_sort(
      hot.processes.begin(), hot.processes.end(),
      [](const PythonProcessRow& a, const PythonProcessRow& b) { return b.samples < a.samples; });
  return hot;
}

}  // namespace eacgm::analysis
