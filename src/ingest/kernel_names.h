// Kernel names for launch events: kernel handles (host stub pointers, CUfunctions)
// mapped to demangled names, learnt from registration and module/library lookups,
// with the ELF symbol of the host stub as the fallback for kernels registered before
// the tracer started. A name string the BPF program could not read (not paged in yet)
// or cut short is read again from the process's memory (ingest/process_memory.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/call_event.h"
#include "ingest/process_maps.h"

namespace eacgm::ingest {

// Name strings of naming calls read from the process's memory (or, for a process that
// is gone, from the file it had mapped) because the captured copy faulted, came back
// empty or was cut at the record's string areas (190 bytes).
struct KernelNameCounters {
  std::uint64_t from_memory = 0;  // read and used
  std::uint64_t unreadable = 0;   // the process had exited, nothing readable was there,
                                  // or what was there did not look like the name
};

class KernelNames {
 public:
  struct Options {
    std::size_t max_handles_per_pid = 16384;  // a pid's cache is cleared when it fills
    std::size_t max_pids = 1024;              // past this the least recently used pid goes
    std::size_t max_elf_files = 32;           // symbol tables kept for the fallback
    std::size_t max_name_len = 4096;          // a name read from process memory (mangled
                                              // template names are long)
  };
  KernelNames() : KernelNames(Options{}) {}
  explicit KernelNames(Options options, std::shared_ptr<const ProcessMapsCache> remembered = nullptr)
      : options_(options), remembered_(std::move(remembered)) {}

  // Learns from naming calls (__cudaRegisterFunction, cuModuleGetFunction,
  // cuLibraryGetKernel, cuKernelGetFunction) and sets `event.kernel` on launches
  // (specs with a DerivedArg::Op::kKernelName value) and on the naming calls that named
  // a kernel. A name string the BPF side could not read (or cut short) but that was
  // read here from the process replaces the event's `str`, its fault bit and
  // truncation flag cleared, so the formats show the name instead of "?". Called on
  // the ingest thread.
  void enrich(CallEvent& event);
  // The process exec'd (or exited): its handles mean nothing any more.
  void forget(std::uint32_t pid);
  // Processes it keeps state for (to forget the ones that exited).
  std::vector<std::uint32_t> pids() const;
  const KernelNameCounters& counters() const { return counters_; }

  // Building blocks, public for tests.
  void learn(std::uint32_t pid, std::uint64_t handle, std::string name);
  // The cached name, else the ELF symbol covering `handle` in the pid's file mappings;
  // "" when neither knows it (remembered, so an unknown handle costs one lookup).
  std::string_view lookup(std::uint32_t pid, std::uint64_t handle);
  // The demangled name of the function symbol covering `file_offset` in `path`, or "".
  std::string symbol_at(const std::string& path, std::uint64_t file_offset);

 private:
  struct Process {
    std::unordered_map<std::uint64_t, std::string> names;
    ProcessMappings maps;
    bool maps_read = false;
    std::list<std::uint32_t>::iterator lru;
  };
  struct FileSymbols {
    struct Range {
      std::uint64_t offset = 0, size = 0;
      std::string name;  // demangled
    };
    std::vector<Range> ranges;  // sorted by offset
  };

  // What a probe's calls mean to the cache, worked out once per probe from its spec.
  struct Role {
    enum class Kind : std::uint8_t {
      kNone,
      kLaunch,            // handle: the launched handle (the kKernelName value's `from`)
      kRegistration,      // handle: host_fun, name: device_fun
      kNameLookup,        // handle: the CUfunction/CUkernel out-param, name: its name
      kKernelToFunction,  // handle: the CUfunction out-param, kernel: the CUkernel
    };
    Kind kind = Kind::kNone;
    int handle = -1, name = -1, kernel = -1;  // argument indexes, -1 when absent
    std::shared_ptr<const ProbeInfo> probe;   // whose role this is (ids are reused
                                              // across probe tables, as in tests)
  };
  static Role make_role(const std::shared_ptr<const ProbeInfo>& probe);
  const Role& role(const std::shared_ptr<const ProbeInfo>& probe);
  // The mangled name a naming call asked for: the captured string, else the one at the
  // argument's pointer in the process's memory; "" when neither has it.
  std::string mangled_name(CallEvent& event, int name_arg);
  // The string at `addr` in the process, else in the files it mapped (remembered
  // mappings of a process that is gone).
  std::optional<std::string> read_string(std::uint32_t pid, std::uint64_t addr);

  Process& process(std::uint32_t pid);
  std::string resolve_from_elf(std::uint32_t pid, Process& p, std::uint64_t addr);
  const FileSymbols* file_symbols(const std::string& open_path);

  Options options_;
  std::shared_ptr<const ProcessMapsCache> remembered_;  // may be null
  KernelNameCounters counters_;
  std::vector<Role> roles_;  // by probe id
  Role uncached_role_;       // for an id too large to index roles_ by
  std::unordered_map<std::uint32_t, Process> processes_;
  std::list<std::uint32_t> lru_;  // most recent first
  std::unordered_map<std::string, std::shared_ptr<const FileSymbols>> files_;
  std::list<std::string> file_order_;  // oldest first
};

}  // namespace eacgm::ingest
