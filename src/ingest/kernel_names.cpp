// Kernel-name cache: naming calls feed it, launches read it; the ELF fallback reads
// /proc/<pid>/maps once per process (again only for an address no mapping covers).
#include "ingest/kernel_names.h"

#include <algorithm>

#include "ingest/process_memory.h"
#include "probe/elf_symbols.h"
#include "probe/library_match.h"

namespace eacgm::ingest {
namespace {
// The captured value of argument `i`, if it was captured and read.
std::optional<std::uint64_t> arg_value(const CallEvent& e, int i) {
  if (i < 0 || i >= e.nargs || (e.fault_mask & (1u << i))) return std::nullopt;
  return e.args[static_cast<std::size_t>(i)];
}

// A lookup that failed wrote nothing through its out-pointer: what we read there is
// the caller's stale value, so only successful calls teach names.
bool succeeded(const CallEvent& e) { return e.has_exit && static_cast<std::int32_t>(e.ret) == 0; }

// Whatever else a pointer may find (freed memory reused by other data, a non-string),
// a symbol name is printable ASCII without spaces.
bool looks_like_symbol(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 0x7f; });
}

// Roles are cached by probe id; ids past this (none in practice) are not cached.
constexpr std::uint32_t kMaxCachedRoles = 1u << 20;

}  // namespace

KernelNames::Role KernelNames::make_role(const std::shared_ptr<const ProbeInfo>& probe) {
  Role r;
  r.probe = probe;
  const ProbeSpec& spec = probe->spec;
  for (const auto& d : spec.derived) {
    if (d.op != DerivedArg::Op::kKernelName) continue;
    r.kind = Role::Kind::kLaunch;
    r.handle = arg_index(spec, d.from);
    return r;
  }
  const std::string& fn = spec.name;
  if (fn == "__cudaRegisterFunction") {
    r.kind = Role::Kind::kRegistration;
    r.handle = arg_index(spec, "host_fun");
    r.name = arg_index(spec, "device_fun");
  } else if (fn == "cuModuleGetFunction" || fn == "cuLibraryGetKernel") {
    r.kind = Role::Kind::kNameLookup;
    r.handle = arg_index(spec, fn == "cuModuleGetFunction" ? "func" : "kernel_handle");
    r.name = arg_index(spec, "name");
  } else if (fn == "cuKernelGetFunction") {
    r.kind = Role::Kind::kKernelToFunction;
    r.handle = arg_index(spec, "func");
    r.kernel = arg_index(spec, "kernel_handle");
  }
  return r;
}

const KernelNames::Role& KernelNames::role(const std::shared_ptr<const ProbeInfo>& probe) {
  const std::uint32_t id = probe->id;
  if (id >= kMaxCachedRoles) {
    uncached_role_ = make_role(probe);
    return uncached_role_;
  }
  if (id >= roles_.size()) roles_.resize(id + 1);
  Role& r = roles_[id];
  if (r.probe != probe) r = make_role(probe);
  return r;
}

std::optional<std::string> KernelNames::read_string(std::uint32_t pid, std::uint64_t addr) {
  if (auto read = read_process_string(pid, addr, options_.max_name_len)) return read;
  // Gone (or unreadable): a name in the program's .rodata is still in its file.
  if (remembered_) {
    if (auto maps = remembered_->find(pid))
      return read_mapped_file_string(*maps, addr, options_.max_name_len);
  }
  return std::nullopt;
}

std::string KernelNames::mangled_name(CallEvent& event, int name_arg) {
  if ((!event.str.empty() && !event.str_truncated) || name_arg < 0 || name_arg >= event.nargs) {
    return event.str;
  }
  // The capture faulted (its page was not resident, which BPF cannot change), came back
  // empty or was cut short; the record still holds the pointer, and reading it from
  // here faults the page in. The read starts past the first string area: a name in a
  // buffer freed since the call has its first bytes overwritten by the allocator's
  // free-list links, while the rest still matches what the call was given, which the
  // overlap with the captured bytes checks.
  const std::size_t skip = std::min<std::size_t>(event.str.size(), kStringContinuation);
  const std::uint64_t ptr = event.args[static_cast<std::size_t>(name_arg)];
  auto read = read_string(event.pid, ptr + skip);
  const std::string_view captured = std::string_view(event.str).substr(skip);
  if (read && looks_like_symbol(*read) && read->starts_with(captured) && read->size() > captured.size()) {
    ++counters_.from_memory;
    // The event now carries what the call was given, as if the BPF side had read it.
    event.str = event.str.substr(0, skip) + *read;
    event.str_truncated = false;
    event.fault_mask = static_cast<std::uint8_t>(event.fault_mask & ~(1u << name_arg));
    return event.str;
  }
  ++counters_.unreadable;
  return event.str;  // "" or the cut name
}

void KernelNames::enrich(CallEvent& event) {
  if (!event.probe) return;
  const Role& r = role(event.probe);
  switch (r.kind) {
    case Role::Kind::kNone:
      return;
    case Role::Kind::kLaunch:
      if (auto handle = arg_value(event, r.handle); handle && *handle != 0) {
        event.kernel.assign(lookup(event.pid, *handle));
      }
      return;
    case Role::Kind::kRegistration: {
      // The mangled device name lives in the program's .rodata, often not paged in
      // when registration runs: then it is read from the process, and failing that the
      // host stub's own symbol names the kernel, resolved now while the process is
      // young rather than at its first launch.
      auto host = arg_value(event, r.handle);
      if (!host) return;
      if (std::string name = mangled_name(event, r.name); !name.empty()) {
        std::string demangled = probe::demangle(name);
        event.kernel = demangled;
        learn(event.pid, *host, std::move(demangled));
      } else {
        event.kernel.assign(lookup(event.pid, *host));
      }
      return;
    }
    case Role::Kind::kNameLookup: {
      auto handle = arg_value(event, r.handle);
      if (!handle || !succeeded(event)) return;
      if (std::string name = mangled_name(event, r.name); !name.empty()) {
        std::string demangled = probe::demangle(name);
        event.kernel = demangled;
        learn(event.pid, *handle, std::move(demangled));
      }
      return;
    }
    case Role::Kind::kKernelToFunction: {
      auto func = arg_value(event, r.handle);
      auto kernel = arg_value(event, r.kernel);
      if (func && kernel && succeeded(event)) {
        auto& names = process(event.pid).names;
        if (auto it = names.find(*kernel); it != names.end() && !it->second.empty()) {
          learn(event.pid, *func, it->second);
        }
      }
      return;
    }
  }
}

void KernelNames::forget(std::uint32_t pid) {
  auto it = processes_.find(pid);
  if (it == processes_.end()) return;
  lru_.erase(it->second.lru);
  processes_.erase(it);
}

std::vector<std::uint32_t> KernelNames::pids() const {
  std::vector<std::uint32_t> out;
  out.reserve(processes_.size());
  for (const auto& [pid, p] : processes_) out.push_back(pid);
  return out;
}

KernelNames::Process& KernelNames::process(std::uint32_t pid) {
  auto it = processes_.find(pid);
  if (it != processes_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    return it->second;
  }
  if (processes_.size() >= options_.max_pids && !lru_.empty()) forget(lru_.back());
  lru_.push_front(pid);
  Process& p = processes_[pid];
  p.lru = lru_.begin();
  return p;
}

void KernelNames::learn(std::uint32_t pid, std::uint64_t handle, std::string name) {
  Process& p = process(pid);
  if (p.names.size() >= options_.max_handles_per_pid) p.names.clear();
  p.names[handle] = std::move(name);
}

std::string_view KernelNames::lookup(std::uint32_t pid, std::uint64_t handle) {
  Process& p = process(pid);
  if (auto it = p.names.find(handle); it != p.names.end()) return it->second;
  std::string name = resolve_from_elf(pid, p, handle);
  if (p.names.size() >= options_.max_handles_per_pid) p.names.clear();
  return p.names.emplace(handle, std::move(name)).first->second;
}

std::string KernelNames::resolve_from_elf(std::uint32_t pid, Process& p, std::uint64_t addr) {
  auto find = [&]() -> const FileMapping* {
    for (const auto& m : p.maps) {
      if (m.executable && addr >= m.start && addr < m.end) return &m;
    }
    return nullptr;
  };
  const FileMapping* m = p.maps_read ? find() : nullptr;
  if (m == nullptr) {
    // First need, or a library mapped since the last read; for a process that is gone,
    // the mappings remembered while it lived.
    if (auto maps = read_process_mappings(pid)) {
      p.maps = std::move(*maps);
    } else if (auto kept = remembered_ ? remembered_->find(pid) : nullptr) {
      p.maps = *kept;
    } else {
      return {};
    }
    p.maps_read = true;
    m = find();
    if (m == nullptr) return {};  // a heap handle (CUfunction), not code
  }
  std::uint64_t file_offset = addr - m->start + m->offset;
  std::string name = symbol_at(m->open_path, file_offset);
  if (name.empty() && m->open_path != m->path) name = symbol_at(m->path, file_offset);
  return name;
}

std::string KernelNames::symbol_at(const std::string& path, std::uint64_t file_offset) {
  const FileSymbols* fs = file_symbols(path);
  if (fs == nullptr) return {};
  auto it = std::upper_bound(fs->ranges.begin(), fs->ranges.end(), file_offset,
                             [](std::uint64_t off, const FileSymbols::Range& r) { return off < r.offset; });
  if (it == fs->ranges.begin()) return {};
  --it;
  if (file_offset >= it->offset + std::max<std::uint64_t>(it->size, 1)) return {};
  return it->name;
}

const KernelNames::FileSymbols* KernelNames::file_symbols(const std::string& open_path) {
  if (auto it = files_.find(open_path); it != files_.end()) return it->second.get();
  auto table = probe::ElfSymbolTable::load(open_path);
  auto fs = std::make_shared<FileSymbols>();
  if (table) {
    for (const auto& s : table->symbols()) {
      if (!s.is_function || s.is_ifunc || s.file_offset == 0) continue;
      fs->ranges.push_back({s.file_offset, s.size, s.name});
    }
    std::sort(fs->ranges.begin(), fs->ranges.end(),
              [](const auto& a, const auto& b) { return a.offset < b.offset; });
    // Demangle lazily would save little: a host binary has few function symbols
    // compared with a launch stream, and each name is used many times.
    for (auto& r : fs->ranges) r.name = probe::demangle(r.name);
  }
  // A failed load is cached too (empty), so an unreadable file costs one attempt.
  if (files_.size() >= options_.max_elf_files && !file_order_.empty()) {
    files_.erase(file_order_.front());
    file_order_.pop_front();
  }
  file_order_.push_back(open_path);
  const FileSymbols* raw = fs.get();
  files_.emplace(open_path, std::move(fs));
  return raw;
}

}  // namespace eacgm::ingest
