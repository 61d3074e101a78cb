// SystemTap SDT (USDT) probe descriptors from .note.stapsdt: where each static probe sits in
// the file and how its arguments are passed (Python's function__entry/return, for example).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace eacgm::probe {

struct UsdtProbe {
  std::string provider;                 // "python"
  std::string name;                     // "function__entry"
  std::uint64_t address = 0;            // probe pc, adjusted for where .stapsdt.base really is
  std::uint64_t file_offset = 0;        // address through its PT_LOAD segment (the uprobe offset)
  std::uint64_t base_address = 0;       // .stapsdt.base as recorded in the note
  std::uint64_t semaphore_address = 0;  // 0 when the probe has no semaphore
  std::uint64_t semaphore_offset = 0;   // file offset of the semaphore (uprobe ref_ctr_offset)
  std::string arguments;                // e.g. "8@%rbp 8@%r12 -4@%eax"
};

// All SDT probes of an ELF file, in note order; an empty vector when it has none.
Result<std::vector<UsdtProbe>> read_usdt_probes(const std::string& path);

// Whether `probes` hold "provider:name" (e.g. "python:function__entry").
bool has_usdt_probe(const std::vector<UsdtProbe>& probes, std::string_view provider_and_name);

}  // namespace eacgm::probe
