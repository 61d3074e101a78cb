// A synthetic CPython interpreter in a fake memory, laid out by the real offsets of a
// version (src/probe/python_stack_layouts.cpp): thread states, frames and code objects at
// fixed addresses, for the tests of the user-space stack walk.
#pragma once

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <vector>

#include "bpf/py_sample.h"
#include "ingest/python_thread_stack.h"
#include "probe/python_layouts.h"
#include "probe/python_stack_layouts.h"

namespace eacgm::ingest::fakes {

constexpr std::uint64_t kRuntime = 0x10000, kInterp = 0x20000, kCodeType = 0x7777000;
constexpr std::uint32_t kPid = 500;

// Objects at fixed addresses, each a block of its own as far as its last field written; a
// read succeeds within one block.
class FakeMemory {
 public:
  template <typename T>
  void put(std::uint64_t addr, std::uint64_t offset, T value) {
    auto& block = blocks_[addr];
    block.resize(std::max<std::size_t>(block.size(), offset + sizeof(T)));
    std::memcpy(block.data() + offset, &value, sizeof(value));
  }
  void unmap(std::uint64_t addr) { blocks_.erase(addr); }
  RemoteRead reader() {
    return [this](std::uint64_t addr, void* out, std::size_t len) {
      ++reads;
      auto it = blocks_.upper_bound(addr);
      if (it == blocks_.begin()) return false;
      --it;
      if (addr + len > it->first + it->second.size()) return false;
      std::memcpy(out, it->second.data() + (addr - it->first), len);
      return true;
    };
  }
  int reads = 0;

 private:
  std::map<std::uint64_t, std::vector<std::uint8_t>> blocks_;
};

inline eacgm_py_proc proc_of(int minor) {
  eacgm_py_proc p{};
  p.runtime = kRuntime;
  p.code_type = kCodeType;
  p.layout = probe::encode_stack_layout(*probe::python_stack_layout({3, minor}),
                                        *probe::python_frame_layout({3, minor}));
  return p;
}

// A synthetic process: an interpreter with thread states, frames and code objects.
class Interpreter {
 public:
  explicit Interpreter(int minor) : proc(proc_of(minor)), l(proc.layout) {
    mem.put<std::uint64_t>(kRuntime, l.interp_head, kInterp);
    mem.put<std::uint64_t>(kInterp, l.interp_next, 0);
    mem.put<std::uint64_t>(kInterp, l.threads_head, 0);
  }
  // A thread state (appended to the list) whose innermost frame is `frame`.
  std::uint64_t thread(std::uint64_t native_id, std::uint64_t frame) {
    const std::uint64_t ts = 0x30000 + 0x1000 * threads_.size();
    mem.put<std::uint64_t>(ts, l.tstate_next, 0);
    if (l.tstate_native_id != EACGM_PY_NO_FIELD) mem.put<std::uint64_t>(ts, l.tstate_native_id, native_id);
    if (l.cframe_frame != EACGM_PY_NO_FIELD) {
      const std::uint64_t cframe = ts + 0x800;
      mem.put<std::uint64_t>(ts, l.tstate_frame, cframe);
      mem.put<std::uint64_t>(cframe, l.cframe_frame, frame);
    } else {
      mem.put<std::uint64_t>(ts, l.tstate_frame, frame);
    }
    if (threads_.empty()) {
      mem.put<std::uint64_t>(kInterp, l.threads_head, ts);
    } else {
      mem.put<std::uint64_t>(threads_.back(), l.tstate_next, ts);
    }
    threads_.push_back(ts);
    return ts;
  }
  // A code object with identity words starting at `seed`.
  std::uint64_t code(std::uint32_t seed, std::uint64_t type = kCodeType) {
    const std::uint64_t c = 0x50000 + 0x1000 * codes_++;
    mem.put<std::uint64_t>(c, 8, type);
    for (std::uint32_t i = 0; i < EACGM_PY_CODE_ID_WORDS; ++i)
      mem.put<std::uint32_t>(c, 16 + 4 * i, seed + i);
    return c;
  }
  static std::uint32_t code_id(std::uint32_t seed, std::uint16_t mask) {
    std::array<std::uint32_t, EACGM_PY_CODE_ID_WORDS> words{};
    for (std::uint32_t i = 0; i < words.size(); ++i) words[i] = seed + i;
    return eacgm_py_code_id(words.data(), mask);
  }
  // A frame at `addr` running `code` at `instr`, called by `previous`.
  void frame(std::uint64_t addr, std::uint64_t code, std::uint64_t instr, std::uint64_t previous,
             std::uint8_t owner = 0) {
    mem.put<std::uint64_t>(addr, l.frame_code, code);
    mem.put<std::uint64_t>(addr, l.frame_previous, previous);
    if (l.frame_owner != EACGM_PY_NO_FIELD) mem.put<std::uint8_t>(addr, l.frame_owner, owner);
    if (l.instr_is_index != 0) {
      mem.put<std::int32_t>(addr, l.frame_instr, static_cast<std::int32_t>(instr));
    } else {
      mem.put<std::uint64_t>(addr, l.frame_instr, instr);
    }
  }
  ThreadStackStatus read(std::uint32_t tid, eacgm_py_sample& out) {
    return read_thread_stack(mem.reader(), proc, kPid, tid, out);
  }

  FakeMemory mem;
  eacgm_py_proc proc;
  const eacgm_py_layout& l;

 private:
  std::vector<std::uint64_t> threads_;
  int codes_ = 0;
};

}  // namespace eacgm::ingest::fakes
