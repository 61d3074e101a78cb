// Discovery and attach: finds library files that match the specs (in /proc/*/maps
// and the loader cache), resolves symbols, and attaches once per file (uprobes are
// per inode, so every process using the file is covered).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/probe_spec.h"
#include "probe/bpf_tracer.h"
#include "probe/library_scan.h"
#include "probe/probe_table.h"
#include "probe/usdt_notes.h"

namespace eacgm::probe {

struct AttachStats {
  std::size_t libraries = 0;                         // library files with at least one probe
  std::size_t probes = 0;                            // attached probes (entry+exit counts once)
  std::size_t uprobes = 0;                           // kernel uprobes (entry and exit separately)
  std::size_t attach_failures = 0;                   // uprobes the kernel refused
  std::size_t unresolved = 0;                        // exact symbols missing from a matching library
  std::vector<std::string> failure_messages;         // first few, for the summary
  std::set<std::string> resolved_specs;              // spec names attached somewhere
  std::map<std::string, std::string> unresolved_in;  // spec name -> a library lacking it
  std::set<std::string> library_matched;             // spec names whose library pattern matched a file
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

class Attacher {
 public:
  using Notice = std::function<void(const std::string&)>;
  Attacher(BpfTracer& bpf, ProbeTable& table, std::vector<ProbeSpec> specs, Notice notice);
  Attacher(const Attacher&) = delete;
  Attacher& operator=(const Attacher&) = delete;

  // Libraries from the loader cache: covers processes that have not started yet.
  void scan_ld_cache();
  // Executable mappings of these pids (every process when empty).
  void scan_processes(const std::vector<int>& pids);
  void scan_process(int pid);
  // One file by path: a command's executable, attached before it starts running.
  void scan_file(const std::string& path);

  const AttachStats& stats() const { return stats_; }
  const std::vector<ProbeSpec>& specs() const { return specs_; }

 private:
  void consider(const std::string& path, const std::string& open_path, std::uint64_t dev,
                std::uint64_t inode);
  void attach_file(const std::string& path, const std::string& open_path);
  void attach_loader(const std::string& open_path);
  // The sites of a USDT spec in one file, with their operand locations and semaphores.
  void resolve_usdt(const ProbeSpec& spec, const std::vector<UsdtProbe>& notes, const std::string& path,
                    std::vector<ProbePoint>& entries, const std::function<void(const std::string&)>& fail);

  BpfTracer& bpf_;
  ProbeTable& table_;
  std::vector<ProbeSpec> specs_;
  Notice notice_;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen_;  // (dev, inode)
  std::set<std::string> warned_;
  std::vector<UprobeLink> links_;
  AttachStats stats_;
};

}  // namespace eacgm::probe
