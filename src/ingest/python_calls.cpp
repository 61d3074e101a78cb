// Per-thread entry/return pairing for Python calls, with a bounded stack per thread.
// Returns are matched by (function, file) through USDT, by stack pointer through frame
// reading, so that one lost record costs one call, not every call above it.
#include "ingest/python_calls.h"

#include <fnmatch.h>

#include <algorithm>

#include "probe/catalog.h"
#include "probe/python_layouts.h"

namespace eacgm::ingest {
namespace {

// Raw USDT record argument order (probe/catalog_python.cpp): function, file, line.
constexpr std::size_t kRawFile = 1, kRawLine = 2;
constexpr std::size_t kMaxFilterCache = 4096;
// A return's stack pointer is its entry's plus the popped return address.
constexpr std::uint64_t kReturnAddressBytes = 8;

bool fault(const CallEvent& e, std::size_t arg) { return ((e.fault_mask >> arg) & 1) != 0; }

// Frame reading takes a str's characters where a compact ASCII str keeps them; other
// strs (non-ASCII names and paths) read as something else, which must not be shown.
bool printable_ascii(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

ProbeSpec make_call_spec() {
  ProbeSpec s;
  s.name = "python_call";
  s.domain = "python";
  s.library = "*python3*";
  s.with_exit = true;  // reported as paired calls, with a duration
  s.ret = ReturnKind::kNone;
  ArgSpec file;
  file.name = "file";
  file.kind = ArgKind::kString;
  ArgSpec line;
  line.name = "line";
  line.kind = ArgKind::kU32;
  line.format = ArgFormat::kSigned;
  s.args = {file, line};
  return s;
}

// "pkg/mod.py" -> "mod": the module part of a qualified name, from the file alone.
std::string module_of(const std::string& file) {
  std::size_t slash = file.rfind('/');
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  if (base.size() > 3 && base.compare(base.size() - 3, 3, ".py") == 0) base.resize(base.size() - 3);
  return base;
}

}  // namespace

const ProbeSpec& python_call_spec() {
  static const ProbeSpec spec = make_call_spec();
  return spec;
}

PythonCalls::PythonCalls(std::string file_filter) : filter_(std::move(file_filter)) {}

PythonCalls::Role PythonCalls::role_of(const ProbeInfo* probe) {
  if (probe == last_probe_) return last_role_;
  Role role = Role::kOther;
  if (!probe->spec.usdt.empty()) {
    if (probe->spec.name == probe::kPythonEntrySpec) role = Role::kEntry;
    if (probe->spec.name == probe::kPythonReturnSpec) role = Role::kReturn;
  } else if (probe->spec.name == probe::kPythonFrameSpec && probe->spec.split_return) {
    role = Role::kFrame;
  }
  last_probe_ = probe;
  last_role_ = role;
  return role;
}

bool PythonCalls::passes_filter(const std::string& file) {
  if (filter_.empty()) return true;
  if (auto it = filter_cache_.find(file); it != filter_cache_.end()) return it->second;
  const bool pass = ::fnmatch(filter_.c_str(), file.c_str(), 0) == 0;
  if (filter_cache_.size() >= kMaxFilterCache) filter_cache_.clear();
  filter_cache_.emplace(file, pass);
  return pass;
}

const std::shared_ptr<const ProbeInfo>& PythonCalls::function_info(const Frame& f) {
  std::string key = f.file;
  key.push_back('\0');
  key += f.function;
  if (auto it = functions_.find(key); it != functions_.end()) return it->second;
  if (functions_.size() >= kMaxFunctions) {
    if (!overflow_info_) {
      ProbeInfo info;
      info.function = "(other)";
      info.spec = python_call_spec();
      overflow_info_ = std::make_shared<const ProbeInfo>(std::move(info));
    }
    return overflow_info_;
  }
  // One ProbeInfo per function, shared by its calls, so summaries key on it like any probe.
  ProbeInfo info;
  info.function = f.function;
  info.symbol = module_of(f.file) + "." + f.function;
  info.library = f.file;
  info.spec = python_call_spec();
  return functions_.emplace(std::move(key), std::make_shared<const ProbeInfo>(std::move(info))).first->second;
}

void PythonCalls::complete(const Frame& what, const CallEvent& ret, const std::uint64_t* entry_ts,
                           const Emit& emit) {
  if (!passes_filter(what.file)) {
    filtered_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  out_.probe = function_info(what);
  out_.pid = ret.pid;
  out_.tid = ret.tid;
  out_.comm = ret.comm;
  // Without its entry a call is still counted exactly, but has no start or duration.
  out_.has_exit = entry_ts != nullptr;
  out_.ts_ns = entry_ts ? *entry_ts : ret.ts_ns;
  out_.dur_ns = entry_ts && ret.ts_ns >= *entry_ts ? ret.ts_ns - *entry_ts : 0;
  out_.ret = 0;
  out_.nargs = 2;
  out_.args = {};
  out_.args[1] = static_cast<std::uint32_t>(what.line);
  out_.fault_mask = what.fault_mask;
  out_.str = what.file;
  out_.str_truncated = what.file_truncated;
  out_.str2.clear();
  out_.str2_truncated = false;
  calls_.fetch_add(1, std::memory_order_relaxed);
  if (!entry_ts) unpaired_.fetch_add(1, std::memory_order_relaxed);
  emit(out_);
}

void PythonCalls::forget(std::uint32_t pid) {
  std::erase_if(threads_, [pid](const auto& kv) { return kv.second.pid == pid; });
}

std::vector<std::uint32_t> PythonCalls::pids() const {
  std::vector<std::uint32_t> out;
  for (const auto& [tid, t] : threads_) {
    if (std::find(out.begin(), out.end(), t.pid) == out.end()) out.push_back(t.pid);
  }
  return out;
}

PythonCalls::Thread& PythonCalls::thread(std::uint32_t tid) {
  if (auto it = threads_.find(tid); it != threads_.end()) return it->second;
  if (threads_.size() >= kMaxThreads) threads_.erase(threads_.begin());  // a long-gone thread, most likely
  return threads_[tid];
}

bool PythonCalls::consume(const CallEvent& e, const Emit& emit) {
  if (!e.probe) return false;
  const Role role = role_of(e.probe.get());
  if (role == Role::kOther) return false;
  Thread& t = thread(e.tid);
  t.pid = e.pid;
  if (role == Role::kFrame) {
    consume_frame(e, t, emit);
  } else {
    consume_usdt(role, e, t, emit);
  }
  return true;
}

bool PythonCalls::at_depth_cap(Thread& t) {
  if (t.stack.size() < kMaxDepth) return false;
  ++t.overflow;
  depth_overflows_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void PythonCalls::consume_usdt(Role role, const CallEvent& e, Thread& t, const Emit& emit) {
  // The raw record: function in str, file in str2 (catalog_python.cpp).
  if (role == Role::kEntry) {
    if (at_depth_cap(t)) return;
    Frame f;
    f.ts_ns = e.ts_ns;
    f.function = e.str;
    f.file = e.str2;
    t.stack.push_back(std::move(f));
    return;
  }
  Frame what;  // what the return says: the function, its file, the line it left from
  what.function = e.str;
  what.file = e.str2;
  what.line = static_cast<std::int32_t>(static_cast<std::uint32_t>(e.args[kRawLine]));
  what.fault_mask = static_cast<std::uint8_t>((fault(e, kRawFile) ? 1 : 0) | (fault(e, kRawLine) ? 2 : 0));
  what.file_truncated = e.str2_truncated;
  if (t.overflow > 0) {
    --t.overflow;
    complete(what, e, nullptr, emit);
    return;
  }
  // Usually the top frame; deeper only when records were lost in between.
  for (std::size_t k = t.stack.size(); k-- > 0;) {
    const Frame& f = t.stack[k];
    if (f.function == e.str && f.file == e.str2) {
      unreturned_.fetch_add(t.stack.size() - 1 - k, std::memory_order_relaxed);
      complete(what, e, &f.ts_ns, emit);
      t.stack.resize(k);
      return;
    }
  }
  // No entry: the call began before attach, or the interpreter does not fire
  // function__entry for it (CPython 3.11 skips it for most calls; docs/probes.md).
  complete(what, e, nullptr, emit);
}

void PythonCalls::consume_frame(const CallEvent& e, Thread& t, const Emit& emit) {
  if (!e.has_exit) {
    if (at_depth_cap(t)) return;
    Frame f;
    f.ts_ns = e.ts_ns;
    f.sp = e.args[probe::kFrameSp];
    // The name, file and first line of the frame's code object (probe/python_layouts.h).
    f.function = printable_ascii(e.str) ? e.str : "?";
    if (printable_ascii(e.str2)) {
      f.file = e.str2;
      f.file_truncated = e.str2_truncated;
    } else {
      f.fault_mask |= 1;
    }
    f.line = static_cast<std::int32_t>(static_cast<std::uint32_t>(e.args[probe::kFrameLine]));
    if (fault(e, probe::kFrameLine)) f.fault_mask |= 2;
    t.stack.push_back(std::move(f));
    return;
  }
  // A return: its stack pointer names its entry.
  const std::uint64_t entry_sp = e.args[probe::kFrameSp] - kReturnAddressBytes;
  for (std::size_t k = t.stack.size(); k-- > 0;) {
    const Frame& f = t.stack[k];
    if (f.sp == entry_sp) {
      // Entries above it (and past the depth cap) lost their returns: a lost record, or
      // calls nested deeper than the kernel keeps return probes for.
      unreturned_.fetch_add(t.stack.size() - 1 - k + t.overflow, std::memory_order_relaxed);
      t.overflow = 0;
      complete(f, e, &f.ts_ns, emit);
      t.stack.resize(k);
      return;
    }
  }
  if (t.overflow > 0) {
    --t.overflow;  // most likely an entry past the depth cap (counted then): unnamed
    return;
  }
  // Entered before tracing began (or its entry record was lost): nothing names it.
  orphan_returns_.fetch_add(1, std::memory_order_relaxed);
}

PythonCallCounters PythonCalls::counters() const {
  PythonCallCounters c;
  c.calls = calls_.load(std::memory_order_relaxed);
  c.filtered = filtered_.load(std::memory_order_relaxed);
  c.unpaired = unpaired_.load(std::memory_order_relaxed);
  c.unreturned = unreturned_.load(std::memory_order_relaxed);
  c.depth_overflows = depth_overflows_.load(std::memory_order_relaxed);
  c.orphan_returns = orphan_returns_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace eacgm::ingest
