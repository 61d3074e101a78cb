// Python stacks as the sampler saw them: one on-CPU thread of a Python process at one
// sampling tick, its frames named (function, file, line) from the process's code objects.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace eacgm {

// A code object: what names a Python function. Shared by every frame that runs it.
struct PythonCode {
  std::string function;  // co_qualname (3.11+) or co_name (3.10)
  std::string file;      // co_filename
  int first_line = 0;    // co_firstlineno
};

struct PythonFrame {
  std::shared_ptr<const PythonCode> code;
  int line = 0;  // the line running in this frame; the function's first line when unknown
};

struct PythonStack {
  std::uint64_t ts_ns = 0;  // CLOCK_MONOTONIC
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string comm;
  std::vector<PythonFrame> frames;  // innermost first; empty outside Python code
  bool truncated = false;           // deeper than the sampler walks (outer frames missing)
  bool no_thread = false;           // a thread without a Python thread state
};

}  // namespace eacgm
