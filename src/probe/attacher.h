// Discovery and attach: finds library files that match the specs (in /proc/*/maps
// and the loader cache), resolves symbols, and attaches once per file (uprobes are
// per inode, so every process using the file is covered).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/probe_spec.h"
#include "probe/always_on.h"
#include "probe/bpf_tracer.h"
#include "probe/defined_symbols.h"
#include "probe/library_scan.h"
#include "probe/probe_table.h"
#include "probe/usdt_notes.h"

namespace eacgm::probe {

class ElfSymbolTable;

struct AttachStats {
  std::size_t libraries = 0;                         // library files with at least one probe now
  std::size_t probes = 0;                            // probes attached now (entry+exit counts once)
  std::size_t uprobes = 0;                           // kernel uprobes now (entry and exit separately)
  std::size_t files_forgotten = 0;                   // files detached and forgotten: unmapped and gone
  std::size_t files_detached = 0;                    // files detached on request (detach_file)
  std::size_t attach_failures = 0;                   // uprobes the kernel refused
  std::size_t unresolved = 0;                        // exact symbols missing from a matching library
  std::vector<std::string> failure_messages;         // first few, for the summary
  std::set<std::string> resolved_specs;              // spec names attached somewhere
  std::map<std::string, std::string> unresolved_in;  // spec name -> a library lacking it
  std::set<std::string> library_matched;             // spec names whose library pattern matched a file
  std::size_t stand_ins_detached = 0;                // runtime probes left to the driver's (until_driver)
};

// What the attacher knows of one library file it has considered (by (dev, inode)).
struct AttachedFileInfo {
  std::string path;  // as matched (the name /proc/<pid>/maps or the loader cache shows)
  std::uint64_t dev = 0;
  std::uint64_t inode = 0;
  bool from_ld_cache = false;  // first found in the loader cache, not in a process
  bool detached = false;       // detached on request: not attached again while it is this file
  std::size_t probes = 0;      // attached probes
  std::size_t uprobes = 0;
};

// Where tracing looks for libraries that load later, for the wording of the warnings.
enum class TraceScope : std::uint8_t {
  kWholeMachine,  // every process: waits for the library to be loaded anywhere
  kTargets,       // a command or --pid processes (and their children)
};

// One warning per user-defined spec whose library pattern matched no file, neither
// mapped by a process nor in the loader cache (a typo such as "libnotthere.so*" would
// otherwise trace nothing, silently):
//   probe "x": no library matching "libnotthere.so*" is loaded or in the loader cache;
//   whole-machine mode keeps waiting for it
// Specs that matched a library (attached, or missing the symbol: reported apart) get none.
std::vector<std::string> unmatched_library_warnings(const std::vector<ProbeSpec>& user_specs,
                                                    const AttachStats& stats, TraceScope scope);

// Thread-safe: every public member takes the attacher's lock.
class Attacher {
 public:
  using Notice = std::function<void(const std::string&)>;
  Attacher(BpfTracer& bpf, ProbeTable& table, std::vector<ProbeSpec> specs, Notice notice);
  Attacher(const Attacher&) = delete;
  Attacher& operator=(const Attacher&) = delete;

  // Libraries from the loader cache: covers processes that have not started yet.
  void scan_ld_cache();
  // Executable mappings of these pids (every process when empty): a whole rescan. It
  // ends a probe-id quarantine period, then forgets the files none of these processes
  // maps any more and whose path no longer names them (deleted or replaced): their
  // links are detached, their probes cleared and their ids released.
  void scan_processes(const std::vector<int>& pids);
  void scan_process(int pid);
  // A whole rescan of no processes (every traced process has exited): ends a
  // quarantine period and forgets the files whose path no longer names them.
  void scan_no_processes();
  // One file by path: a command's executable, attached before it starts running.
  void scan_file(const std::string& path);

  // Detaches every probe of the library file at `path` (as matched, or any path of the
  // same file) and releases their ids; the file is not attached again until it is
  // forgotten (replaced on disk and unmapped). An error when nothing is attached there.
  Status detach_file(const std::string& path);
  // Mutes (or unmutes) one attached probe.
  Status set_muted(std::uint32_t probe_id, bool muted);
  // Mutes (or unmutes) every attached probe of this display name, and those of that
  // name attached later. An error when no attached probe has the name.
  Status set_muted(const std::string& function, bool muted);
  // Times one call in 2^shift per CPU of each counted probe attached from now on.
  void set_sample_shift(std::uint8_t shift);
  // Per-call probes attached from now on are counted at entry too (ProbeInfo::tallied):
  // where the counted probes' maps are drained (always-on), before the first scan.
  void set_tally(bool tally);
  // Probes (function or spec names) that stay attached when the others are cycled
  // (probe/always_on.h pinned_probe); before the first scan.
  void set_pinned(std::set<std::string> pinned);
  // Attaches or detaches the cycled probes (ProbeInfo::cycled) of every file: one
  // session link per file. Files attached while they are detached wait for the next
  // attach. An error names the files whose link the kernel refused (their cycled
  // probes stay detached until the next attach).
  Status set_cycled_attached(bool attached);
  // The operations whose driver probes (the cuda_driver catalog's) have been attached to
  // a file since the start. The runtime's probes standing in for them
  // (ProbeSpec::until_driver) were detached when the first one attached (their calls
  // from then on are counted at the driver) and are not attached to files found later.
  std::set<DriverOperation> driver_operations() const;

  AttachStats stats() const;
  std::vector<AttachedFileInfo> files() const;
  const std::vector<ProbeSpec>& specs() const { return specs_; }

 private:
  using FileKey = std::pair<std::uint64_t, std::uint64_t>;  // (dev, inode)
  // The runtime's probes of one operation standing in for the driver's in one file: links
  // of their own, so that they can be detached alone.
  struct StandIn {
    std::vector<UprobeLink> links;
    std::vector<std::uint32_t> probe_ids;
    std::size_t uprobes = 0;
  };
  // A file's resolved points of one group, before they are attached.
  struct GroupPoints {
    std::vector<ProbePoint> entries, exits, counted;
  };
  // What a group's attach made: its links, the ids on them, the kernel uprobes.
  struct PointLinks {
    std::vector<UprobeLink> links;
    std::vector<std::uint32_t> ids;
    std::size_t uprobes = 0;
  };
  // A file's resolved points, by how they are attached.
  struct FilePoints {
    GroupPoints own;                 // the file's probes but the runtime's stand-ins for the driver
    std::vector<ProbePoint> cycled;  // counted probes the duty cycle switches
    std::map<DriverOperation, GroupPoints> stand_ins;
    bool gated = false;  // a resolved USDT probe whose gate this file may need
  };
  // What one file's attach added: probes (entry+exit counts once) and kernel uprobes.
  struct AttachedCounts {
    std::size_t probes = 0;
    std::size_t uprobes = 0;
  };
  struct FileRecord {
    std::string path;
    std::string open_path;
    std::uint64_t dev = 0, inode = 0;
    bool from_ld_cache = false;
    bool detached = false;
    std::vector<UprobeLink> links;
    std::vector<ProbePoint> cycled;         // counted probes the duty cycle switches
    std::optional<UprobeLink> cycled_link;  // their link while they are attached
    std::vector<std::uint32_t> probe_ids;   // attached probes (the stand-ins' too)
    std::map<DriverOperation, StandIn> stand_ins;
    std::size_t uprobes = 0;
  };

  void consider(const std::string& path, const std::string& open_path, std::uint64_t dev, std::uint64_t inode,
                bool from_ld_cache = false);
  // Resolves the specs that want the file, attaches their probes together, and steps
  // the runtime's stand-ins aside for driver probes it brought.
  void attach_file(FileRecord& file);
  // The matching specs' probes in one file (registered, not yet attached); `notes`
  // reads the file's USDT notes once, when a spec first asks.
  FilePoints resolve_points(const std::string& path, const std::string& open_path,
                            const std::vector<const ProbeSpec*>& matching, const ElfSymbolTable& elf,
                            const std::function<const std::vector<UsdtProbe>&()>& notes,
                            const std::function<void(const std::string&)>& fail);
  // One symbol spec: its symbols (or pattern's), laid out for the file's interpreter
  // where it reads frames, into `points` by how they attach.
  void resolve_symbols(const ProbeSpec& matched, const std::string& path, const std::string& open_path,
                       const ElfSymbolTable& elf, const std::function<void(const std::string&)>& fail,
                       FilePoints& points);
  // Attaches a file's resolved points onto its links; the ids the kernel refused are
  // released.
  AttachedCounts attach_points(FileRecord& file, FilePoints points,
                               const std::function<void(const std::string&)>& fail);
  // The driver's probes of an operation attached to `file`: its runtime stand-ins step
  // aside (leave_to_driver).
  void driver_probes_attached(const FileRecord& file);
  // The spec's library pattern names the file, or (`by_symbol`) the file defines the
  // spec's also_where_defined symbol.
  bool spec_wants(const ProbeSpec& spec, const std::string& path, const std::string& open_path,
                  std::uint64_t dev, std::uint64_t inode, bool by_symbol);
  void attach_loader(FileRecord& file);
  // Per-call points: one session link, else an entry and a return link, else a link per
  // probe; the ids the kernel refused go to `unattached`.
  PointLinks attach_per_call(const std::string& open_path, std::vector<ProbePoint> entries,
                             const std::vector<ProbePoint>& exits,
                             const std::function<void(const std::string&)>& fail,
                             std::vector<std::uint32_t>& unattached);
  // Counted points: one session link.
  PointLinks attach_counted(const std::string& open_path, const std::vector<ProbePoint>& points,
                            const std::function<void(const std::string&)>& fail,
                            std::vector<std::uint32_t>& unattached);
  // Detaches every file's stand-ins for these operations (the driver's probes of them
  // just attached to `driver_path`, or `copy`: a process runs the hook's copy of the
  // driver at that path) and releases their ids.
  void leave_to_driver(const std::set<DriverOperation>& ops, const std::string& driver_path,
                       bool copy = false);
  // A process maps the hook's private copy of libcuda (core/driver_copy_name.h): there
  // is a driver on the machine, and that process's launches are its hook's to count, so
  // the runtime's stand-ins for every operation the driver's probes see step aside as
  // when those probes attach (a process on the usual libcuda gets them as it maps it).
  void driver_copy_seen(const std::string& path);
  // Registers a probe in the table and the BPF map; nullptr (and a failure) if refused.
  std::shared_ptr<const ProbeInfo> register_probe(ProbeInfo info,
                                                  const std::function<void(const std::string&)>& fail);
  // Forgets the probe ids of a probe that did not attach.
  void unregister_probe(std::uint32_t id);
  // Detaches a file's links and releases its probes; the record stays.
  void release(FileRecord& file);
  void forget_gone(const std::set<FileKey>& mapped);
  // Keeps a USDT gate raised for as long as the file's probes are attached (CPython
  // 3.11's line semaphore, probe/python_usdt.h); its uprobe is counted in `uprobes`.
  void hold_entry_gate(FileRecord& file, const ElfSymbolTable& elf, const std::vector<UsdtProbe>& notes,
                       const std::function<void(const std::string&)>& fail, std::size_t& uprobes);
  // The sites of a USDT spec in one file, with their operand locations and semaphores.
  void resolve_usdt(const ProbeSpec& spec, const std::vector<UsdtProbe>& notes, const std::string& path,
                    std::vector<ProbePoint>& entries, const std::function<void(const std::string&)>& fail);

  BpfTracer& bpf_;
  ProbeTable& table_;
  std::vector<ProbeSpec> specs_;
  Notice notice_;
  mutable std::mutex mutex_;
  std::map<FileKey, FileRecord> files_;  // every file considered and not forgotten
  std::set<std::string> warned_;
  std::set<std::string> muted_functions_;  // muted by name: probes of it attach muted
  AttachStats stats_;
  std::uint8_t sample_shift_ = 4;
  bool tally_ = false;
  std::set<std::string> pinned_;
  bool cycled_attached_ = true;
  std::set<DriverOperation> at_driver_;  // operations whose driver probes have attached
  bool scanned_ = false;                 // a whole scan is done: start-up is over
  bool driver_copy_seen_ = false;        // a process ran the hook's copy of libcuda
  DefinedSymbols defined_;
};

}  // namespace eacgm::probe
