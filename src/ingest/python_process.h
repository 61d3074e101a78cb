// Whether a process runs a CPython interpreter the stack sampler can read, and where:
// the interpreter file it maps (an executable or libpython that defines _PyRuntime), its
// version, and the run-time addresses of _PyRuntime and PyCode_Type.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "bpf/py_sample.h"
#include "core/result.h"
#include "ingest/process_maps.h"
#include "probe/python_layouts.h"

namespace eacgm::ingest {

struct PythonProcess {
  std::string interpreter;  // the file defining _PyRuntime, as mapped
  probe::PythonVersion version;
  eacgm_py_proc proc{};  // what the sampler reads
};

// Finds interpreters in processes; remembers what it learnt of each interpreter file.
class PythonProcessFinder {
 public:
  // nullopt: the process maps no CPython interpreter (yet: libpython may load later).
  // An error: it does, but one the sampler cannot read (its version, a stripped file).
  Result<std::optional<PythonProcess>> find(std::uint32_t pid);
  // The same for mappings already read (tests, or a caller that has them).
  Result<std::optional<PythonProcess>> find_in(const ProcessMappings& maps);

 private:
  struct FileFacts {
    bool interpreter = false;  // defines _PyRuntime
    std::string error;         // why it cannot be sampled ("" when it can)
    probe::PythonVersion version;
    std::uint64_t runtime_vaddr = 0, code_type_vaddr = 0;
    std::uint64_t first_offset = 0, first_vaddr = 0;  // a PT_LOAD segment: its offset and address
  };
  const FileFacts& facts(const FileMapping& m);
  std::map<std::string, FileFacts> files_;  // by the path opened
};

// Whether a mapped file's name looks like a CPython interpreter (python3.X,
// libpython3.X.so...): only those are opened.
bool maybe_python_file(const std::string& path);

}  // namespace eacgm::ingest
