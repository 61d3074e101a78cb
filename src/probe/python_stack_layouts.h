// Where the Python stack sampler finds a thread's frames in CPython 3.8 to 3.13
// (x86-64 release builds): the runtime's interpreter and thread lists, each version's
// frame chain, and what a frame says about its position in its code.
#pragma once

#include <cstdint>
#include <span>

#include "bpf/py_sample.h"
#include "probe/python_layouts.h"

namespace eacgm::probe {

// Offsets in bytes, EACGM_PY_NO_FIELD where a version lacks the field.
struct PythonStackLayout {
  PythonVersion version;
  std::uint16_t interp_head;       // _PyRuntimeState.interpreters.head
  std::uint16_t interp_next;       // PyInterpreterState.next
  std::uint16_t threads_head;      // PyInterpreterState.threads.head (tstate_head up to 3.10)
  std::uint16_t tstate_next;       // PyThreadState.next
  std::uint16_t tstate_thread_id;  // PyThreadState.thread_id (pthread_self())
  std::uint16_t tstate_native_id;  // PyThreadState.native_thread_id (3.11+)
  std::uint16_t tstate_frame;      // frame (to 3.10), cframe (3.11, 3.12), current_frame (3.13)
  std::uint16_t cframe_frame;      // _PyCFrame.current_frame (3.11, 3.12)
  std::uint16_t frame_previous;    // f_back (to 3.10), previous
  std::uint16_t frame_owner;       // owner (3.11+)
  // f_lasti (an int: the byte offset up to 3.9, the code-unit index in 3.10), prev_instr
  // (3.11, 3.12), instr_ptr (3.13)
  std::uint16_t frame_instr;
  std::uint16_t code_units;      // PyCodeObject.co_code_adaptive: the first code unit (3.11+)
  std::uint16_t code_code;       // PyCodeObject.co_code: the bytecode, a bytes object (3.10 and older)
  std::uint16_t code_linetable;  // PyCodeObject.co_linetable (co_lnotab up to 3.9): a bytes object
  std::uint16_t bytes_data;      // PyBytesObject.ob_sval: where a bytes object's data starts
  // The code object's words, from offset 16, that make its identity (bpf/py_sample.h,
  // eacgm_py_code_id): bit i for the 4-byte word at 16 + 4 * i.
  std::uint16_t code_id_words;
};

// Every known layout, oldest first.
std::span<const PythonStackLayout> python_stack_layouts();
// The layout of one version, or nullptr when there is none.
const PythonStackLayout* python_stack_layout(PythonVersion version);

// What the sampler reads for one version: this table's offsets and the frame's code
// field from the frame layouts (python_layouts.h).
eacgm_py_layout encode_stack_layout(const PythonStackLayout& stack, const PythonFrameLayout& frame);

}  // namespace eacgm::probe
