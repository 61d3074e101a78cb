// The stack layout table. The sampler walks these structures in another process's memory,
// so each number is pinned to the headers it came from.
#include "probe/python_stack_layouts.h"

#include <array>

namespace eacgm::probe {
namespace {

constexpr std::uint16_t kNone = EACGM_PY_NO_FIELD;

// From offsetof compiled against each version's headers with Py_BUILD_CORE
// (internal/pycore_runtime.h, pycore_interp.h, pycore_frame.h, cpython/pystate.h,
// cpython/code.h; 3.8: internal/pycore_pystate.h) of CPython 3.8.18, 3.9.18, 3.10.13,
// 3.11.7, 3.12.1 and 3.13.0, x86-64, release builds:
// tests/unit/probe/fixtures/python_stack_offsets.c prints them, and
// PythonStackLayouts.TableMatchesInstalledHeaders compares where those headers are installed.
//
// The code identity's words (the last column) are the fields from offset 16 to the first
// line that running the code leaves alone:
// - 3.8 to 3.10: co_argcount, co_posonlyargcount, co_kwonlyargcount, co_nlocals,
//   co_stacksize, co_flags, co_firstlineno (16-43), not the padding after it, then co_code,
//   co_consts, co_names (48-71);
// - 3.11: ob_size (the bytecode's length), co_consts, co_names, co_exceptiontable,
//   co_flags (16-51), not co_warmup and _co_linearray_entry_size (the interpreter changes
//   both), then co_argcount to co_firstlineno (56-75);
// - 3.12 and 3.13: ob_size to co_firstlineno (16-71).
constexpr std::uint16_t kIdTo310 = 0x3f7f, kId311 = 0x7dff, kIdFrom312 = 0x3fff;
constexpr std::array<PythonStackLayout, 6> kLayouts = {{
    // 3.8 and 3.9: as 3.10, but f_lasti (in bytes, not code units) sits after f_trace's
    // flags and the line table is co_lnotab, at co_linetable's place.
    {{3, 8}, 32, 0, 8, 8, 176, kNone, 24, kNone, 24, kNone, 104, kNone, 48, 120, 32, kIdTo310},
    {{3, 9}, 32, 0, 8, 8, 176, kNone, 24, kNone, 24, kNone, 104, kNone, 48, 120, 32, kIdTo310},
    // 3.10: heap frame objects linked by f_back from tstate->frame; no native thread id,
    // so threads are matched by thread_id (pthread_self()); f_lasti counts code units.
    {{3, 10}, 32, 0, 8, 8, 176, kNone, 24, kNone, 24, kNone, 96, kNone, 48, 120, 32, kIdTo310},
    // 3.11: _PyInterpreterFrame linked by previous, reached through tstate->cframe; the
    // bytecode is inline (co_code_adaptive), its length the object's ob_size.
    {{3, 11}, 40, 0, 16, 8, 152, 160, 56, 8, 48, 69, 56, 184, kNone, 136, 32, kId311},
    // 3.12: f_code moved first; C entry frames are owned by FRAME_OWNED_BY_CSTACK.
    {{3, 12}, 40, 0, 72, 8, 136, 144, 56, 0, 8, 70, 56, 192, kNone, 136, 32, kIdFrom312},
    // 3.13: no _PyCFrame (tstate->current_frame); _PyRuntime starts with _Py_DebugOffsets.
    {{3, 13}, 632, 7264, 7344, 8, 152, 160, 72, kNone, 8, 70, 56, 200, kNone, 136, 32, kIdFrom312},
}};

}  // namespace

std::span<const PythonStackLayout> python_stack_layouts() { return kLayouts; }

const PythonStackLayout* python_stack_layout(PythonVersion version) {
  for (const auto& l : kLayouts) {
    if (l.version == version) return &l;
  }
  return nullptr;
}

eacgm_py_layout encode_stack_layout(const PythonStackLayout& stack, const PythonFrameLayout& frame) {
  eacgm_py_layout l{};
  l.interp_head = stack.interp_head;
  l.interp_next = stack.interp_next;
  l.threads_head = stack.threads_head;
  l.tstate_next = stack.tstate_next;
  l.tstate_thread_id = stack.tstate_thread_id;
  l.tstate_native_id = stack.tstate_native_id;
  l.tstate_frame = stack.tstate_frame;
  l.cframe_frame = stack.cframe_frame;
  l.frame_previous = stack.frame_previous;
  l.frame_code = frame.frame_code;
  l.frame_owner = stack.frame_owner;
  l.frame_instr = stack.frame_instr;
  // f_lasti (3.10 and older) is an int; later versions keep a pointer to the code unit.
  l.instr_is_index = stack.code_units == kNone ? 1 : 0;
  l.code_id_words = stack.code_id_words;
  l.version = static_cast<std::uint16_t>(stack.version.major << 8 | stack.version.minor);
  return l;
}

}  // namespace eacgm::probe
