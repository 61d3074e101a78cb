// Python stacks as the sampler saw them: one on-CPU thread of a Python process at one
// sampling tick, its frames named (function, file, line) from the process's code objects.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace eacgm {

// A code object: what names a Python function. Shared by every frame that runs it. Or a
// native frame: the traced call (a CUDA synchronization, an NCCL call) the innermost
// Python frame waits in, "[domain] function", without file or line.
struct PythonCode {
  std::string function;  // co_qualname (3.11+) or co_name (3.10); "[cuda_driver] cuStreamSynchronize"
  std::string file;      // co_filename; "" for a native frame
  int first_line = 0;    // co_firstlineno; 0 for a native frame
  bool native = false;
};

struct PythonFrame {
  std::shared_ptr<const PythonCode> code;
  int line = 0;  // the line running in this frame; the function's first line when unknown
};

struct PythonStack {
  std::uint64_t ts_ns = 0;  // CLOCK_MONOTONIC
  std::uint32_t pid = 0;
  std::uint32_t tid = 0;
  std::string comm;  // the process's name (its main thread's), not the sampled thread's
  // Innermost first; empty outside Python code. When the thread was inside a traced
  // waiting call, frames[0] is that call (a native frame), then the Python frames.
  std::vector<PythonFrame> frames;
  bool truncated = false;  // deeper than the sampler walks (outer frames missing)
  bool no_thread = false;  // a thread without a Python thread state
};

}  // namespace eacgm
