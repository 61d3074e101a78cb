// Kernel names for launch events: kernel handles (host stub pointers, CUfunctions)
// mapped to demangled names, learnt from registration and module/library lookups,
// with the ELF symbol of the host stub as the fallback for kernels registered before
// the tracer started.
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

namespace eacgm::ingest {

class KernelNames {
 public:
  struct Options {
    std::size_t max_handles_per_pid = 16384;  // a pid's cache is cleared when it fills
    std::size_t max_pids = 1024;              // past this the least recently used pid goes
    std::size_t max_elf_files = 32;           // symbol tables kept for the fallback
  };
  KernelNames() : KernelNames(Options{}) {}
  explicit KernelNames(Options options) : options_(options) {}

  // Learns from naming calls (__cudaRegisterFunction, cuModuleGetFunction,
  // cuLibraryGetKernel, cuKernelGetFunction) and sets `event.kernel` on launches
  // (specs with a DerivedArg::Op::kKernelName value). Called on the ingest thread.
  void enrich(CallEvent& event);
  // The process exec'd (or exited): its handles mean nothing any more.
  void forget(std::uint32_t pid);

  // Building blocks, public for tests.
  void learn(std::uint32_t pid, std::uint64_t handle, std::string name);
  // The cached name, else the ELF symbol covering `handle` in the pid's file mappings;
  // "" when neither knows it (remembered, so an unknown handle costs one lookup).
  std::string_view lookup(std::uint32_t pid, std::uint64_t handle);
  // The demangled name of the function symbol covering `file_offset` in `path`, or "".
  std::string symbol_at(const std::string& path, std::uint64_t file_offset);

 private:
  struct Mapping {
    std::uint64_t start = 0, end = 0, offset = 0;
    std::string path;       // as shown in /proc/<pid>/maps
    std::string open_path;  // through /proc/<pid>/root when that still exists
  };
  struct Process {
    std::unordered_map<std::uint64_t, std::string> names;
    std::vector<Mapping> maps;
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

  Process& process(std::uint32_t pid);
  std::string resolve_from_elf(std::uint32_t pid, Process& p, std::uint64_t addr);
  const FileSymbols* file_symbols(const std::string& open_path);

  Options options_;
  std::unordered_map<std::uint32_t, Process> processes_;
  std::list<std::uint32_t> lru_;  // most recent first
  std::unordered_map<std::string, std::shared_ptr<const FileSymbols>> files_;
  std::list<std::string> file_order_;  // oldest first
};

}  // namespace eacgm::ingest
