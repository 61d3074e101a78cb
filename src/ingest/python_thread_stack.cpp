// The user-space walk of one thread's Python frames (ingest/python_thread_stack.h). Each
// step follows bpf/py_sample.bpf.c: keep the two in step.
#include "ingest/python_thread_stack.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "ingest/process_memory.h"

namespace eacgm::ingest {
namespace {

// A pointer-sized word; 0 when it cannot be read (as the sampler's read_ptr).
std::uint64_t read_word(const RemoteRead& read, std::uint64_t addr) {
  std::uint64_t v = 0;
  if (!read(addr, &v, sizeof(v))) return 0;
  return v;
}

// Every thread state of the process, interpreter by interpreter, within the sampler's
// bounds (EACGM_PY_MAX_INTERPS interpreters of EACGM_PY_MAX_THREADS thread states).
std::vector<std::uint64_t> thread_states(const RemoteRead& read, const eacgm_py_layout& l,
                                         std::uint64_t interp) {
  std::vector<std::uint64_t> out;
  for (int i = 0; i < EACGM_PY_MAX_INTERPS && interp != 0; ++i) {
    std::uint64_t tstate = read_word(read, interp + l.threads_head);
    for (int t = 0; t < EACGM_PY_MAX_THREADS && tstate != 0; ++t) {
      out.push_back(tstate);
      tstate = read_word(read, tstate + l.tstate_next);
    }
    interp = read_word(read, interp + l.interp_next);
  }
  return out;
}

// A frame's fields (code, owner, instruction, previous) in one read where it can be made:
// each read is a system call, a few µs, and a frame has four fields. Field by field where
// the whole cannot be read (a frame at the end of a mapping), as the sampler reads them.
class FrameFields {
 public:
  FrameFields(const RemoteRead& read, const eacgm_py_layout& l) : read_(read) {
    const auto end = [](std::uint16_t offset, std::size_t len) {
      return offset == EACGM_PY_NO_FIELD ? std::size_t{0} : offset + len;
    };
    span_ = std::max({end(l.frame_code, 8), end(l.frame_previous, 8), end(l.frame_owner, 1),
                      end(l.frame_instr, l.instr_is_index != 0 ? 4 : 8)});
  }
  void at(std::uint64_t frame) {
    frame_ = frame;
    whole_ = span_ <= buf_.size() && read_(frame, buf_.data(), span_);
  }
  bool get(std::uint16_t offset, void* out, std::size_t len) const {
    if (whole_ && offset + len <= span_) {
      std::memcpy(out, buf_.data() + offset, len);
      return true;
    }
    return read_(frame_ + offset, out, len);
  }
  std::uint64_t word(std::uint16_t offset) const {
    std::uint64_t v = 0;
    return get(offset, &v, sizeof(v)) ? v : 0;
  }

 private:
  const RemoteRead& read_;
  std::array<std::uint8_t, 128> buf_{};
  std::size_t span_ = 0;
  std::uint64_t frame_ = 0;
  bool whole_ = false;
};

// Records the frames from `frame` on into `out`: one per Python function's frame, innermost
// first, C entry frames (3.12+) and frames whose code is not a code object left out.
void walk_frames(const RemoteRead& read, const eacgm_py_proc& proc, std::uint64_t frame,
                 eacgm_py_sample& out) {
  const eacgm_py_layout& l = proc.layout;
  std::uint32_t depth = 0;
  FrameFields fields(read, l);
  // Room for C entry frames, which are skipped: twice the depth, as the sampler.
  for (int step = 0; step < 2 * EACGM_PY_MAX_DEPTH; ++step) {
    if (frame == 0 || depth >= EACGM_PY_MAX_DEPTH) break;
    fields.at(frame);
    const std::uint64_t code = fields.word(l.frame_code);
    std::uint8_t owner = 0;
    if (l.frame_owner != EACGM_PY_NO_FIELD && !fields.get(l.frame_owner, &owner, sizeof(owner))) {
      owner = EACGM_PY_OWNED_BY_CSTACK;  // unreadable: not a frame to report
    }
    // ob_type, then the words that make the code's identity.
    std::array<std::uint32_t, 2 + EACGM_PY_CODE_ID_WORDS> obj{};
    if (code != 0 && owner != EACGM_PY_OWNED_BY_CSTACK && read(code + 8, obj.data(), sizeof(obj)) &&
        (obj[0] | static_cast<std::uint64_t>(obj[1]) << 32) == proc.code_type) {
      std::uint64_t instr = 0;
      if (l.instr_is_index != 0) {
        std::int32_t lasti = 0;
        if (fields.get(l.frame_instr, &lasti, sizeof(lasti)) && lasti >= 0)
          instr = static_cast<std::uint64_t>(lasti);
      } else {
        instr = fields.word(l.frame_instr);
      }
      eacgm_py_frame& f = out.frames[depth];
      f.code = code;
      f.instr = instr;
      f.code_id = eacgm_py_code_id(&obj[2], l.code_id_words);
      f.pad = 0;
      ++depth;
    }
    std::uint64_t prev = 0;
    if (!fields.get(l.frame_previous, &prev, sizeof(prev))) {
      out.flags |= EACGM_PY_READ_FAULT;
      prev = 0;
    }
    frame = prev;
  }
  if (frame != 0) out.flags |= EACGM_PY_TRUNCATED;
  out.depth = static_cast<std::uint16_t>(depth);
}

}  // namespace

RemoteRead live_process_memory(std::uint32_t pid) {
  return [pid](std::uint64_t addr, void* out, std::size_t len) {
    return read_process_bytes(pid, addr, out, len);
  };
}

ThreadStackStatus read_thread_stack(const RemoteRead& read, const eacgm_py_proc& proc, std::uint32_t pid,
                                    std::uint32_t tid, eacgm_py_sample& out) {
  const eacgm_py_layout& l = proc.layout;
  out.pid = pid;
  out.tid = tid;
  out.depth = 0;
  out.flags = 0;
  out.version = l.version;
  out.pad = 0;
  out.call_probe = 0;
  out.pad2 = 0;

  std::uint64_t interp = 0;
  if (!read(proc.runtime + l.interp_head, &interp, sizeof(interp))) return ThreadStackStatus::kUnreadable;
  const std::vector<std::uint64_t> states = thread_states(read, l, interp);
  std::uint64_t tstate = 0;
  if (l.tstate_native_id != EACGM_PY_NO_FIELD) {
    for (std::uint64_t s : states) {
      if (read_word(read, s + l.tstate_native_id) == tid) {
        tstate = s;
        break;
      }
    }
  } else if (states.size() == 1 && tid == pid) {
    tstate = states.front();
  } else if (!states.empty()) {
    return ThreadStackStatus::kAmbiguous;
  }
  if (tstate == 0) return ThreadStackStatus::kNoThread;

  std::uint64_t frame = read_word(read, tstate + l.tstate_frame);
  if (l.cframe_frame != EACGM_PY_NO_FIELD && frame != 0) frame = read_word(read, frame + l.cframe_frame);
  walk_frames(read, proc, frame, out);
  return ThreadStackStatus::kRead;
}

}  // namespace eacgm::ingest
