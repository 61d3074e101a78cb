// Per-thread entry/return pairing for Python calls, with a bounded stack per thread.
// Returns are matched by (function, file) so that one lost record costs one call,
// not every call above it.
#include "ingest/python_calls.h"

#include <fnmatch.h>

#include "probe/catalog.h"

namespace eacgm::ingest {
namespace {

// Raw record argument order (probe/catalog_python.cpp): function, file, line.
constexpr std::size_t kRawFunction = 0, kRawFile = 1, kRawLine = 2;
constexpr std::size_t kMaxFilterCache = 4096;

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
  return functions_.emplace(std::move(key), std::make_shared<const ProbeInfo>(std::move(info)))
      .first->second;
}

void PythonCalls::complete(const CallEvent& ret, const Frame* entry, const Emit& emit) {
  Frame f;  // what the return says: the function, its file, the line it left from
  f.function = ret.str;
  f.file = ret.str2;
  f.line = static_cast<std::int32_t>(static_cast<std::uint32_t>(ret.args[kRawLine]));
  if (!passes_filter(f.file)) {
    filtered_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  out_.probe = function_info(f);
  out_.pid = ret.pid;
  out_.tid = ret.tid;
  out_.comm = ret.comm;
  // Without its entry a call is still counted exactly, but has no start or duration.
  out_.has_exit = entry != nullptr;
  out_.ts_ns = entry ? entry->ts_ns : ret.ts_ns;
  out_.dur_ns = entry && ret.ts_ns >= entry->ts_ns ? ret.ts_ns - entry->ts_ns : 0;
  out_.ret = 0;
  out_.nargs = 2;
  out_.args = {};
  out_.args[1] = static_cast<std::uint32_t>(f.line);
  out_.fault_mask = static_cast<std::uint8_t>(((ret.fault_mask >> kRawFile) & 1) |
                                              (((ret.fault_mask >> kRawLine) & 1) << 1));
  out_.str = f.file;
  out_.str_truncated = ret.str2_truncated;
  out_.str2.clear();
  out_.str2_truncated = false;
  calls_.fetch_add(1, std::memory_order_relaxed);
  if (!entry) unpaired_.fetch_add(1, std::memory_order_relaxed);
  emit(out_);
}

bool PythonCalls::consume(const CallEvent& e, const Emit& emit) {
  if (!e.probe) return false;
  const Role role = role_of(e.probe.get());
  if (role == Role::kOther) return false;
  Thread* t;
  if (auto it = threads_.find(e.tid); it != threads_.end()) {
    t = &it->second;
  } else {
    if (threads_.size() >= kMaxThreads) threads_.erase(threads_.begin());  // a long-gone thread, most likely
    t = &threads_[e.tid];
  }
  // The raw record: function in str, file in str2 (catalog_python.cpp).
  if (role == Role::kEntry) {
    if (t->stack.size() >= kMaxDepth) {
      ++t->overflow;
      depth_overflows_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
    Frame f;
    f.ts_ns = e.ts_ns;
    f.function = e.str;
    f.file = e.str2;
    t->stack.push_back(std::move(f));
    return true;
  }
  if (t->overflow > 0) {
    --t->overflow;
    complete(e, nullptr, emit);
    return true;
  }
  // Usually the top frame; deeper only when records were lost in between.
  for (std::size_t k = t->stack.size(); k-- > 0;) {
    const Frame& f = t->stack[k];
    if (f.function == e.str && f.file == e.str2) {
      unreturned_.fetch_add(t->stack.size() - 1 - k, std::memory_order_relaxed);
      complete(e, &f, emit);
      t->stack.resize(k);
      return true;
    }
  }
  // No entry: the call began before attach, or the interpreter does not fire
  // function__entry for it (CPython 3.11 skips it for most calls; docs/probes.md).
  complete(e, nullptr, emit);
  return true;
}

PythonCallCounters PythonCalls::counters() const {
  PythonCallCounters c;
  c.calls = calls_.load(std::memory_order_relaxed);
  c.filtered = filtered_.load(std::memory_order_relaxed);
  c.unpaired = unpaired_.load(std::memory_order_relaxed);
  c.unreturned = unreturned_.load(std::memory_order_relaxed);
  c.depth_overflows = depth_overflows_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace eacgm::ingest
