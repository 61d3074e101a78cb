// Attach policy: one pass over each new library file, all matching specs at once.
#include "probe/attacher.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <optional>

#include "core/driver_copy_name.h"
#include "probe/always_on.h"
#include "probe/elf_symbols.h"
#include "probe/library_match.h"
#include "probe/python_usdt.h"
#include "probe/usdt_notes.h"

namespace eacgm::probe {
namespace {

constexpr std::size_t kMaxFailureMessages = 8;

bool is_dynamic_loader(std::string_view path) {
  return library_matches("ld-linux*.so*", path) || library_matches("ld-*.so", path);
}

}  // namespace

Attacher::Attacher(BpfTracer& bpf, ProbeTable& table, std::vector<ProbeSpec> specs, Notice notice)
    : bpf_(bpf), table_(table), specs_(std::move(specs)), notice_(std::move(notice)) {}

void Attacher::scan_ld_cache() {
  std::lock_guard<std::mutex> lock(mutex_);
  auto libs = ld_cache_libraries();
  if (!libs) {
    notice_(fmt::format("warning: loader cache not read ({}); relying on /proc scans", libs.error()));
    return;
  }
  for (const auto& lib : *libs) {
    auto id = file_identity(lib.path);
    if (id) consider(lib.path, lib.path, id->first, id->second, true);
  }
}

namespace {

// Once in the agent's life, not at every rescan nor at every reload (SIGHUP makes a new
// Attacher) while the same processes stay unreadable.
bool first_in_process(const std::string& warning) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard lock(mutex);
  if (said.size() >= 64) return false;  // bounded: past this many kinds, the counters tell
  return said.insert(warning).second;
}

}  // namespace

void Attacher::scan_processes(const std::vector<int>& pids) {
  std::lock_guard<std::mutex> lock(mutex_);
  MapsScan scan = scan_maps(pids);
  for (const auto& w : scan.warnings) {
    if (warned_.insert(w).second && first_in_process(w)) notice_("warning: " + w);
  }
  for (const auto& f : scan.files) consider(f.path, f.open_path, f.dev, f.inode);
  table_.end_period();
  forget_gone(scan.mapped);
  scanned_ = true;
}

void Attacher::scan_no_processes() {
  std::lock_guard<std::mutex> lock(mutex_);
  table_.end_period();
  forget_gone({});
  scanned_ = true;
}

void Attacher::scan_process(int pid) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& f : scan_pid_maps(pid)) consider(f.path, f.open_path, f.dev, f.inode);
}

void Attacher::scan_file(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  // Symlinks (/usr/bin/python3 -> python3.11) are matched by the name the maps show.
  std::error_code ec;
  std::string real = std::filesystem::canonical(path, ec).string();
  if (ec) return;
  // A script (pyenv's python3 shim, a wrapper) holds no probes; the interpreter it
  // execs is found in the process's mappings like any other.
  if (!is_elf_file(real)) return;
  auto id = file_identity(real);
  if (id) consider(real, real, id->first, id->second);
}

void Attacher::consider(const std::string& path, const std::string& open_path, std::uint64_t dev,
                        std::uint64_t inode, bool from_ld_cache) {
  if (!driver_copy_seen_ && !from_ld_cache && is_driver_copy(path)) driver_copy_seen(path);
  bool loader = is_dynamic_loader(path);
  bool wanted = loader;
  // Files of the loader cache are matched by name only: opening each of them (thousands)
  // to look for a static runtime would slow every start; programs are found mapped.
  for (const auto& s : specs_) wanted = wanted || spec_wants(s, path, open_path, dev, inode, !from_ld_cache);
  if (!wanted) return;
  auto [it, added] = files_.try_emplace(FileKey{dev, inode});
  if (!added) return;
  FileRecord& file = it->second;
  file.path = path;
  file.open_path = open_path;
  file.dev = dev;
  file.inode = inode;
  file.from_ld_cache = from_ld_cache;
  if (loader) attach_loader(file);
  attach_file(file);
}

void Attacher::attach_loader(FileRecord& file) {
  auto elf = ElfSymbolTable::load(file.open_path);
  if (!elf) return;
  const ElfSymbol* sym = elf->find("_dl_debug_state");
  if (!sym) return;  // no hint: periodic rescans still find late libraries
  auto link = bpf_.attach_loader_hint(file.open_path, sym->file_offset);
  if (link) file.links.push_back(std::move(*link));
}

std::shared_ptr<const ProbeInfo> Attacher::register_probe(
    ProbeInfo info, const std::function<void(const std::string&)>& fail) {
  // Always-on specs are counted where the kernel has uprobe sessions; elsewhere they
  // are traced per call (the same numbers, at the per-call cost).
  info.counted = info.spec.always_on == AlwaysOn::kCount && bpf_.has_session();
  info.cycled = cycled_probe(info, pinned_);
  // A split probe's halves are paired in user space, which counts the call once paired.
  info.tallied = tally_ && !info.counted && !(info.spec.with_exit && info.spec.split_return);
  auto probe = table_.add(std::move(info));
  const std::uint8_t shift = times_every_call(probe->spec) ? 0 : sample_shift_;
  if (auto st = bpf_.set_probe(probe->id, probe->spec, probe->counted, shift, probe->cycled, probe->tallied);
      !st) {
    table_.remove(probe->id);
    fail(st.error());
    return nullptr;
  }
  if (muted_functions_.contains(probe->function)) {
    if (auto st = bpf_.set_probe_enabled(probe->id, false); !st) fail(st.error());
  }
  return probe;
}

void Attacher::set_sample_shift(std::uint8_t shift) {
  std::lock_guard<std::mutex> lock(mutex_);
  sample_shift_ = shift;
}

void Attacher::set_tally(bool tally) {
  std::lock_guard<std::mutex> lock(mutex_);
  tally_ = tally;
}

void Attacher::set_pinned(std::set<std::string> pinned) {
  std::lock_guard<std::mutex> lock(mutex_);
  pinned_ = std::move(pinned);
}

Status Attacher::set_cycled_attached(bool attached) {
  std::lock_guard<std::mutex> lock(mutex_);
  cycled_attached_ = attached;
  std::string refused;
  for (auto& [key, file] : files_) {
    if (!attached) {
      file.cycled_link.reset();
      continue;
    }
    if (file.cycled.empty() || file.cycled_link) continue;
    auto link = bpf_.attach_session(file.open_path, file.cycled);
    if (link) {
      file.cycled_link.emplace(std::move(*link));
    } else {
      refused += (refused.empty() ? "" : "; ") + link.error();
    }
  }
  if (!refused.empty()) return make_error("cycled probes not attached again: " + refused);
  return {};
}

void Attacher::unregister_probe(std::uint32_t id) {
  (void)bpf_.clear_probe(id);  // an entry left behind fires nothing: it is never attached
  table_.remove(id);
}

void Attacher::release(FileRecord& file) {
  // Links first: once they are gone no new record names these probes.
  file.cycled_link.reset();
  file.cycled.clear();
  file.links.clear();
  file.stand_ins.clear();
  for (std::uint32_t id : file.probe_ids) unregister_probe(id);
  if (!file.probe_ids.empty()) {
    --stats_.libraries;
    stats_.probes -= file.probe_ids.size();
  }
  stats_.uprobes -= file.uprobes;
  file.probe_ids.clear();
  file.uprobes = 0;
}

void Attacher::forget_gone(const std::set<FileKey>& mapped) {
  for (auto it = files_.begin(); it != files_.end();) {
    const FileKey& key = it->first;
    FileRecord& file = it->second;
    auto names_it = [&](const std::string& p) {
      auto id = file_identity(p);
      return id && *id == key;
    };
    if (mapped.contains(key) || names_it(file.open_path) ||
        (file.path != file.open_path && names_it(file.path))) {
      ++it;
      continue;
    }
    const std::size_t probes = file.probe_ids.size();
    release(file);
    ++stats_.files_forgotten;
    if (probes > 0) {
      notice_(fmt::format("detached {} probes from {}: no process maps it and the file is gone", probes,
                          file.path));
    }
    it = files_.erase(it);
  }
}

Status Attacher::detach_file(const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto identity = file_identity(path);
  std::size_t matched = 0, detached = 0;
  for (auto& [key, file] : files_) {
    if (file.path != path && file.open_path != path && !(identity && *identity == key)) continue;
    ++matched;
    if (file.probe_ids.empty() && file.links.empty()) continue;
    const std::size_t probes = file.probe_ids.size();
    release(file);
    file.detached = true;
    ++stats_.files_detached;
    ++detached;
    notice_(fmt::format("detached {} probes from {}", probes, file.path));
  }
  if (matched == 0) return make_error(fmt::format("no attached library file {}", path));
  if (detached == 0) return make_error(fmt::format("library file {} has no probes attached", path));
  return {};
}

Status Attacher::set_muted(std::uint32_t probe_id, bool muted) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!table_.is_live(probe_id)) return make_error(fmt::format("no attached probe with id {}", probe_id));
  return bpf_.set_probe_enabled(probe_id, !muted);
}

Status Attacher::set_muted(const std::string& function, bool muted) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::size_t found = 0;
  for (const auto& [key, file] : files_) {
    for (std::uint32_t id : file.probe_ids) {
      auto info = table_.get(id);
      if (!info || info->function != function) continue;
      ++found;
      if (auto st = bpf_.set_probe_enabled(id, !muted); !st) return st;
    }
  }
  if (found == 0) return make_error(fmt::format("no attached probe named {}", function));
  if (muted) {
    muted_functions_.insert(function);
  } else {
    muted_functions_.erase(function);
  }
  return {};
}

AttachStats Attacher::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::vector<AttachedFileInfo> Attacher::files() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<AttachedFileInfo> out;
  for (const auto& [key, file] : files_) {
    out.push_back({file.path, key.first, key.second, file.from_ld_cache, file.detached, file.probe_ids.size(),
                   file.uprobes});
  }
  return out;
}

void Attacher::attach_file(FileRecord& file) {
  const std::string& path = file.path;
  const std::string& open_path = file.open_path;
  std::vector<const ProbeSpec*> matching;
  for (const auto& s : specs_) {
    if (spec_wants(s, path, open_path, file.dev, file.inode, !file.from_ld_cache)) matching.push_back(&s);
  }
  if (matching.empty()) return;
  for (const ProbeSpec* spec : matching) stats_.library_matched.insert(spec->name);
  const std::function<void(const std::string&)> fail = [&](const std::string& msg) {
    ++stats_.attach_failures;
    if (stats_.failure_messages.size() < kMaxFailureMessages) stats_.failure_messages.push_back(msg);
  };
  auto elf = ElfSymbolTable::load(open_path);
  if (!elf) {
    // Only ELF files carry probes: a readable file of another kind is no failure.
    if (!is_elf_file(open_path) && ::access(open_path.c_str(), R_OK) == 0) return;
    fail(elf.error());
    return;
  }
  std::optional<std::vector<UsdtProbe>> usdt;  // read once, when a spec asks
  const std::function<const std::vector<UsdtProbe>&()> notes = [&]() -> const std::vector<UsdtProbe>& {
    if (!usdt) {
      auto read = read_usdt_probes(open_path);
      usdt.emplace(read ? std::move(*read) : std::vector<UsdtProbe>{});
    }
    return *usdt;
  };
  // Resolve every spec first, then attach the file's probes together.
  FilePoints points = resolve_points(path, open_path, matching, *elf, notes, fail);
  const bool gated = points.gated;
  AttachedCounts here = attach_points(file, std::move(points), fail);
  if (gated && here.probes > 0) hold_entry_gate(file, *elf, notes(), fail, here.uprobes);
  file.uprobes += here.uprobes;
  stats_.uprobes += here.uprobes;
  stats_.probes += here.probes;
  if (here.probes > 0) {
    ++stats_.libraries;
    notice_(fmt::format("attached {} probes to {}", here.probes, path));
  }
  driver_probes_attached(file);
}

Attacher::AttachedCounts Attacher::attach_points(FileRecord& file, FilePoints points,
                                                 const std::function<void(const std::string&)>& fail) {
  const std::string& open_path = file.open_path;
  AttachedCounts here;
  std::vector<std::uint32_t> unattached;  // registered, then refused by the kernel
  // Points now on a link of the file's (or waiting for the duty cycle to attach them).
  auto take = [&](PointLinks got, std::vector<UprobeLink>& links) {
    here.probes += got.ids.size();
    here.uprobes += got.uprobes;
    file.probe_ids.insert(file.probe_ids.end(), got.ids.begin(), got.ids.end());
    for (auto& link : got.links) links.push_back(std::move(link));
  };
  take(attach_per_call(open_path, points.own.entries, points.own.exits, fail, unattached), file.links);
  // Counted probes: one session link (the entry, and the return of sampled calls).
  take(attach_counted(open_path, points.own.counted, fail, unattached), file.links);
  // Cycled probes: a link of their own, which the duty cycle detaches and attaches
  // again (set_cycled_attached); while they are detached, it waits.
  std::vector<ProbePoint>& cycled = points.cycled;
  if (!cycled.empty()) {
    std::optional<UprobeLink> link;
    if (cycled_attached_) {
      auto r = bpf_.attach_session(open_path, cycled);
      if (r) {
        link.emplace(std::move(*r));
      } else {
        fail(r.error());
      }
    }
    if (link || !cycled_attached_) {
      file.cycled_link = std::move(link);
      here.probes += cycled.size();
      here.uprobes += cycled.size();
      for (const auto& point : cycled) file.probe_ids.push_back(point.probe_id);
      file.cycled = std::move(cycled);
    } else {
      for (const auto& point : cycled) unattached.push_back(point.probe_id);
    }
  }
  // The runtime's stand-ins for the driver: links of their own per operation, so that
  // those of one operation can be detached alone (leave_to_driver).
  for (auto& [op, group] : points.stand_ins) {
    StandIn& stand_in = file.stand_ins[op];
    const std::size_t before = here.uprobes;
    const std::size_t ids_before = file.probe_ids.size();
    take(attach_per_call(open_path, group.entries, group.exits, fail, unattached), stand_in.links);
    take(attach_counted(open_path, group.counted, fail, unattached), stand_in.links);
    stand_in.uprobes += here.uprobes - before;
    stand_in.probe_ids.insert(stand_in.probe_ids.end(),
                              file.probe_ids.begin() + static_cast<std::ptrdiff_t>(ids_before),
                              file.probe_ids.end());
    if (stand_in.probe_ids.empty()) file.stand_ins.erase(op);
  }
  // Ids the kernel refused go back at once.
  for (std::uint32_t id : unattached) unregister_probe(id);
  return here;
}

// The driver's probes of an operation attached: its runtime stand-ins step aside.
void Attacher::driver_probes_attached(const FileRecord& file) {
  std::set<DriverOperation> now_at_driver;
  for (std::uint32_t id : file.probe_ids) {
    auto probe = table_.get(id);
    if (!probe || probe->spec.domain != "cuda_driver") continue;
    if (auto op = driver_operation(probe->spec); op && !at_driver_.contains(*op)) now_at_driver.insert(*op);
  }
  if (!now_at_driver.empty()) {
    at_driver_.insert(now_at_driver.begin(), now_at_driver.end());
    leave_to_driver(now_at_driver, file.path);
  }
}

Attacher::PointLinks Attacher::attach_per_call(const std::string& open_path, std::vector<ProbePoint> entries,
                                               const std::vector<ProbePoint>& exits,
                                               const std::function<void(const std::string&)>& fail,
                                               std::vector<std::uint32_t>& unattached) {
  PointLinks out;
  auto attached = [&](const std::vector<ProbePoint>& points, std::size_t uprobes) {
    out.uprobes += uprobes;
    for (const auto& point : points) out.ids.push_back(point.probe_id);
  };
  if (bpf_.has_session() && !entries.empty()) {
    // One session link: entries and the returns they ask for (bpf/trace.bpf.c on_entry).
    auto r = bpf_.attach_calls(open_path, entries);
    if (r) {
      out.links.push_back(std::move(*r));
      attached(entries, entries.size());
      entries.clear();
    }
  }
  // Kernels without sessions, or a session link refused: an entry link and a return link.
  if (bpf_.has_multi() && !entries.empty()) {
    // Exits first: an entry without its exit would only fill the pending map.
    std::optional<UprobeLink> exit_link;
    if (!exits.empty()) {
      auto r = bpf_.attach_multi(open_path, exits, true);
      if (r) exit_link.emplace(std::move(*r));
    }
    if (exits.empty() || exit_link) {
      auto r = bpf_.attach_multi(open_path, entries, false);
      if (r) {
        out.links.push_back(std::move(*r));
        if (exit_link) out.links.push_back(std::move(*exit_link));
        attached(entries, entries.size() + exits.size());
        entries.clear();
      }
    }
  }
  // Per-probe links: kernels without uprobe_multi, or a batch the kernel refused
  // (this finds which probe it was).
  for (const auto& point : entries) {
    bool with_exit = std::any_of(exits.begin(), exits.end(),
                                 [&](const ProbePoint& e) { return e.probe_id == point.probe_id; });
    std::optional<UprobeLink> exit;
    if (with_exit) {
      auto r = bpf_.attach(open_path, point.file_offset, point.probe_id, true, point.ref_ctr_offset);
      if (!r) {
        fail(r.error());
        unattached.push_back(point.probe_id);
        continue;
      }
      exit.emplace(std::move(*r));
    }
    auto entry = bpf_.attach(open_path, point.file_offset, point.probe_id, false, point.ref_ctr_offset);
    if (!entry) {
      fail(entry.error());
      unattached.push_back(point.probe_id);
      continue;
    }
    out.links.push_back(std::move(*entry));
    ++out.uprobes;
    if (exit) {
      out.links.push_back(std::move(*exit));
      ++out.uprobes;
    }
    out.ids.push_back(point.probe_id);
  }
  return out;
}

Attacher::PointLinks Attacher::attach_counted(const std::string& open_path,
                                              const std::vector<ProbePoint>& points,
                                              const std::function<void(const std::string&)>& fail,
                                              std::vector<std::uint32_t>& unattached) {
  PointLinks out;
  if (points.empty()) return out;
  auto r = bpf_.attach_session(open_path, points);
  if (!r) {
    fail(r.error());
    for (const auto& point : points) unattached.push_back(point.probe_id);
    return out;
  }
  out.links.push_back(std::move(*r));
  out.uprobes = points.size();
  for (const auto& point : points) out.ids.push_back(point.probe_id);
  return out;
}

void Attacher::driver_copy_seen(const std::string& path) {
  driver_copy_seen_ = true;
  std::set<DriverOperation> ops;
  for (const ProbeSpec& s : specs_) {
    if (s.domain != "cuda_driver") continue;
    if (auto op = driver_operation(s); op && !at_driver_.contains(*op)) ops.insert(*op);
  }
  if (ops.empty()) return;
  at_driver_.insert(ops.begin(), ops.end());
  leave_to_driver(ops, path, true);
}

void Attacher::leave_to_driver(const std::set<DriverOperation>& ops, const std::string& driver_path,
                               bool copy) {
  std::set<std::string> functions;
  std::size_t probes = 0, files = 0;
  for (auto& [key, file] : files_) {
    bool any = false;
    for (auto it = file.stand_ins.begin(); it != file.stand_ins.end();) {
      if (!ops.contains(it->first)) {
        ++it;
        continue;
      }
      StandIn& stand_in = it->second;
      stand_in.links.clear();  // links first: once they are gone no new call is counted here
      for (std::uint32_t id : stand_in.probe_ids) {
        if (auto probe = table_.get(id)) functions.insert(probe->function);
        unregister_probe(id);
        std::erase(file.probe_ids, id);
      }
      probes += stand_in.probe_ids.size();
      stats_.probes -= stand_in.probe_ids.size();
      stats_.uprobes -= stand_in.uprobes;
      file.uprobes -= stand_in.uprobes;
      any = true;
      it = file.stand_ins.erase(it);
    }
    if (!any) continue;
    ++files;
    if (file.probe_ids.empty()) --stats_.libraries;
  }
  stats_.stand_ins_detached += probes;
  // At start (the loader cache lists libcudart and libcuda both) the session says where
  // each operation is counted; later, the switch is said when it happens.
  if (probes == 0 || !scanned_) return;
  const std::size_t shown = std::min<std::size_t>(functions.size(), 4);
  const std::string whose =
      copy ? fmt::format("a process runs its own copy of the driver ({}; its hook counts its launches)",
                         driver_path)
           : fmt::format("the driver's probes attached to {}", driver_path);
  const char* from_now =
      copy ? "at the driver's probes, in processes on the usual libcuda," : "at the driver";
  notice_(fmt::format(
      "notice: {}: {} runtime probe(s) of the same operations ({}{}) detached from {} file(s); those calls "
      "are "
      "counted {} from now on (one layer per operation)",
      whose, probes,
      fmt::join(std::vector<std::string>(functions.begin(),
                                         std::next(functions.begin(), static_cast<std::ptrdiff_t>(shown))),
                ", "),
      functions.size() > shown ? ", ..." : "", files, from_now));
}

std::set<DriverOperation> Attacher::driver_operations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return at_driver_;
}

void Attacher::hold_entry_gate(FileRecord& file, const ElfSymbolTable& elf,
                               const std::vector<UsdtProbe>& notes,
                               const std::function<void(const std::string&)>& fail, std::size_t& uprobes) {
  auto hold = cpython_entry_gate(file.path, file.open_path, elf, notes);
  if (!hold) {
    if (warned_.insert(hold.error()).second) notice_("warning: " + hold.error());
    return;
  }
  if (!*hold) return;  // this version fires its entries as it is
  auto link = bpf_.attach_semaphore_hold(file.open_path, (*hold)->file_offset, (*hold)->ref_ctr_offset);
  if (!link) {
    fail(link.error());
    return;
  }
  file.links.push_back(std::move(*link));
  ++uprobes;
}

std::vector<std::string> unmatched_library_warnings(const std::vector<ProbeSpec>& user_specs,
                                                    const AttachStats& stats, TraceScope scope) {
  std::vector<std::string> out;
  for (const ProbeSpec& spec : user_specs) {
    if (stats.library_matched.count(spec.name) || stats.resolved_specs.count(spec.name) ||
        stats.unresolved_in.count(spec.name)) {
      continue;
    }
    out.push_back(fmt::format("probe \"{}\": no library matching \"{}\" is loaded or in the loader cache; {}",
                              spec.name, spec.library,
                              scope == TraceScope::kWholeMachine
                                  ? "whole-machine mode keeps waiting for it"
                                  : "it is attached if a traced process loads one later (check the pattern "
                                    "with `eacgm probes --check`)"));
  }
  return out;
}

}  // namespace eacgm::probe
