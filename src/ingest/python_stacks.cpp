// Sample decoding and code-object naming.
#include "ingest/python_stacks.h"

#include <fmt/format.h>

#include <array>
#include <cstring>

#include "bpf/py_sample.h"
#include "ingest/process_memory.h"
#include "ingest/python_lines.h"
#include "probe/python_layouts.h"
#include "probe/python_stack_layouts.h"

namespace eacgm::ingest {
namespace {

constexpr std::size_t kMaxName = 512;
constexpr std::size_t kMaxLineTable = 64u << 10;
constexpr std::uint64_t kMaxCodeBytes = 1u << 30;

std::uint64_t load_u64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// A str object's text as UTF-8. Compact ASCII strings (nearly every name and path) hold
// their characters right after PyASCIIObject; other compact strings after
// PyCompactUnicodeObject, as 1, 2 or 4 bytes per character (PyUnicode_KIND).
std::optional<std::string> read_str(std::uint32_t pid, std::uint64_t str, const probe::PythonFrameLayout& l) {
  // ob_refcnt, ob_type, length, hash, then the state bits: interned:2 kind:3 compact:1 ascii:1.
  std::array<std::uint8_t, 40> head{};
  if (!read_process_bytes(pid, str, head.data(), head.size())) return std::nullopt;
  const std::uint64_t length = load_u64(&head[16]);
  std::uint32_t state = 0;
  std::memcpy(&state, &head[32], sizeof(state));
  const unsigned kind = (state >> 2) & 7;
  const bool compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
  if (!compact || length > kMaxName || (kind != 1 && kind != 2 && kind != 4)) return std::nullopt;
  if (ascii) {
    // Exactly `length` characters and a NUL: what a live str holds, and what memory
    // reused since the sample (a code object freed meanwhile) seldom does.
    auto text = read_process_string(pid, str + l.str_ascii_data, kMaxName);
    if (!text || text->size() != length) return std::nullopt;
    return text;
  }
  // PyCompactUnicodeObject adds utf8_length and utf8 (and wstr_length before 3.12).
  const std::uint64_t data = str + l.str_ascii_data + (l.version.minor >= 12 ? 16 : 24);
  std::vector<std::uint8_t> raw(length * kind);
  if (!raw.empty() && !read_process_bytes(pid, data, raw.data(), raw.size())) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < length; ++i) {
    std::uint32_t c = 0;
    std::memcpy(&c, &raw[i * kind], kind);  // little-endian: the low bytes come first
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xc0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xe0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (c & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (c & 0x3f));
    }
  }
  return out;
}

// Whether a frame's instruction lies in a code object's bytecode, which starts at
// `first_unit` (3.11+) and holds `code_bytes`; an instruction outside it was sampled in
// another code object. An unknown instruction (0) or extent proves nothing.
bool inside_code(int minor, std::uint64_t first_unit, std::uint64_t code_bytes, std::uint64_t instr) {
  if (code_bytes == 0) return true;
  if (minor <= 9) return instr < code_bytes;       // f_lasti in bytes
  if (minor == 10) return instr * 2 < code_bytes;  // f_lasti in code units
  if (instr == 0 || first_unit == 0) return true;
  // prev_instr sits one unit before the first while a frame has not started yet.
  return instr + 2 >= first_unit && instr <= first_unit + code_bytes;
}

// The type read is the process's PyCode_Type (0: the process is not sampled, so nothing is).
bool is_code(std::uint64_t type, std::uint64_t code_type) { return code_type != 0 && type == code_type; }

std::shared_ptr<const PythonCode> address_name(std::uint64_t addr) {
  return std::make_shared<const PythonCode>(PythonCode{fmt::format("<code {:#x}>", addr), "", 0});
}

}  // namespace

std::optional<PythonCodeInfo> read_python_code(std::uint32_t pid, int minor, std::uint64_t addr) {
  const auto* frame = probe::python_frame_layout({3, minor});
  const auto* stack = probe::python_stack_layout({3, minor});
  if (frame == nullptr || stack == nullptr) return std::nullopt;
  // The code object's fixed part up to its last field read here.
  std::array<std::uint8_t, 160> obj{};
  static_assert(sizeof(obj) >= 144);
  if (!read_process_bytes(pid, addr, obj.data(), obj.size())) return std::nullopt;
  PythonCodeInfo info;
  info.type = load_u64(&obj[8]);
  std::array<std::uint32_t, EACGM_PY_CODE_ID_WORDS> words{};
  std::memcpy(words.data(), &obj[16], sizeof(words));
  info.code_id = eacgm_py_code_id(words.data(), stack->code_id_words);
  if (stack->code_units != EACGM_PY_NO_FIELD) {
    // 3.11+: a var-object whose ob_size counts the 2-byte code units it holds inline.
    info.first_unit = addr + stack->code_units;
    info.code_bytes = load_u64(&obj[16]) * 2;
  } else {
    // co_code, a bytes object: its ob_size is the bytecode's length.
    std::uint64_t size = 0;
    if (read_process_bytes(pid, load_u64(&obj[stack->code_code]) + 16, &size, sizeof(size))) {
      info.code_bytes = size;
    }
  }
  if (info.code_bytes > kMaxCodeBytes) info.code_bytes = 0;  // not a length: nothing to check against
  auto name = read_str(pid, load_u64(&obj[frame->code_name]), *frame);
  auto file = read_str(pid, load_u64(&obj[frame->code_filename]), *frame);
  std::int32_t first_line = 0;
  std::memcpy(&first_line, &obj[frame->code_firstlineno], sizeof(first_line));
  // A negative first line: not a live code object.
  if (!name || !file || first_line < 0) return info;
  info.code = std::make_shared<const PythonCode>(PythonCode{std::move(*name), std::move(*file), first_line});
  // The line table is a bytes object: ob_size after the header, the data at ob_sval.
  const std::uint64_t table = load_u64(&obj[stack->code_linetable]);
  std::uint64_t size = 0;
  if (table != 0 && read_process_bytes(pid, table + 16, &size, sizeof(size)) && size <= kMaxLineTable) {
    info.linetable.resize(size);
    if (size > 0 && !read_process_bytes(pid, table + stack->bytes_data, info.linetable.data(), size)) {
      info.linetable.clear();
    }
  }
  return info;
}

bool PythonStackDecoder::Code::ran(int minor, std::uint64_t instr, std::uint32_t sampled_id) const {
  return code_id == sampled_id && inside_code(minor, first_unit, code_bytes, instr);
}

const PythonStackDecoder::Code& PythonStackDecoder::unnamed(std::uint64_t addr) {
  scratch_ = Code{};
  scratch_.code = address_name(addr);
  return scratch_;
}

const PythonStackDecoder::Code& PythonStackDecoder::code(std::uint32_t pid, int minor, std::uint64_t addr,
                                                         std::uint64_t instr, std::uint32_t code_id) {
  auto& codes = processes_[pid];
  auto it = codes.find(addr);
  if (it != codes.end()) {
    const Code& kept = it->second;
    if (kept.ran(minor, instr, code_id)) return kept;
    // Sampled with another identity, or outside the code read there: another code object
    // lives there now.
    ++counters_.reread;
  }
  auto info = reader_(pid, minor, addr);
  if (info && code_types_ && !is_code(info->type, code_types_(pid))) {
    // No longer a code object (freed since the sample): nothing to name the frame by, and
    // nothing to keep, as the sampler saw a code object there.
    ++counters_.unnamed;
    if (it != codes.end()) codes.erase(it);
    return unnamed(addr);
  }
  Code c;
  if (info && info->code) {
    c.code = std::move(info->code);
    c.linetable = std::move(info->linetable);
    ++counters_.codes;
  } else {
    // Named by its address: most likely the process is gone (or the names are not readable).
    c.code = address_name(addr);
    ++counters_.unnamed;
  }
  if (info) {
    c.first_unit = info->first_unit;
    c.code_bytes = info->code_bytes;
    c.code_id = info->code_id;
  }
  // Nothing read (the process is gone): nothing shows another code object was sampled.
  const bool sampled_here = !info || c.ran(minor, instr, code_id);
  const Code* out = &scratch_;
  if (it != codes.end()) {
    it->second = std::move(c);
    out = &it->second;
  } else if (codes.size() < kMaxCodesPerProcess) {
    out = &codes.emplace(addr, std::move(c)).first->second;
  } else {
    scratch_ = std::move(c);
  }
  if (sampled_here) return *out;
  // The sampled code object was freed and another allocated at its address before this
  // read: the one read is kept for later samples, but it did not run this frame.
  ++counters_.unnamed;
  return unnamed(addr);
}

std::shared_ptr<const PythonCode> PythonStackDecoder::call_frame(std::uint32_t probe_id) {
  auto probe = probes_(probe_id);
  if (!probe) return nullptr;
  NativeCall& c = calls_[probe_id];
  if (c.probe != probe) {
    c.code = std::make_shared<const PythonCode>(
        PythonCode{fmt::format("[{}] {}", probe->spec.domain, probe->function), "", 0, true});
    c.probe = std::move(probe);
  }
  return c.code;
}

bool PythonStackDecoder::decode(const void* data, std::size_t size, PythonStack& out, bool thread_read) {
  eacgm_py_sample s{};
  if (size < EACGM_PY_SAMPLE_HEADER || size > sizeof(s)) {
    ++counters_.malformed;
    return false;
  }
  std::memcpy(&s, data, size);
  const int major = s.version >> 8, minor = s.version & 0xff;
  if (s.depth > EACGM_PY_MAX_DEPTH || size < static_cast<std::size_t>(EACGM_PY_SAMPLE_SIZE(s.depth)) ||
      major != 3 || probe::python_stack_layout({3, minor}) == nullptr) {
    ++counters_.malformed;
    return false;
  }
  ++(thread_read ? counters_.thread_reads : counters_.samples);
  out.ts_ns = s.ts_ns;
  out.pid = s.pid;
  out.tid = s.tid;
  out.comm.assign(s.comm, strnlen(s.comm, sizeof(s.comm)));
  out.truncated = (s.flags & EACGM_PY_TRUNCATED) != 0;
  out.no_thread = (s.flags & EACGM_PY_NO_THREAD) != 0;
  // A thread inside a traced call: the call ends the stack (only a stack with Python frames:
  // the shares are of samples in Python code).
  std::shared_ptr<const PythonCode> call;
  if ((s.flags & EACGM_PY_IN_CALL) != 0 && s.depth > 0 && probes_) call = call_frame(s.call_probe);
  counters_.in_calls += call != nullptr && !thread_read;
  const std::size_t first = call != nullptr ? 1 : 0;
  out.frames.resize(s.depth + first);
  if (call) out.frames[0] = PythonFrame{std::move(call), 0};
  for (std::size_t i = 0; i < s.depth; ++i) {
    const eacgm_py_frame& f = s.frames[i];
    const Code& c = code(s.pid, minor, f.code, f.instr, f.code_id);
    int line = -1;
    if (minor <= 9) {
      line = python_lnotab_line(c.linetable, c.code->first_line, f.instr);  // f_lasti in bytes
    } else if (minor == 10) {
      line = python310_line(c.linetable, c.code->first_line, f.instr * 2);
    } else if (c.first_unit != 0) {
      // prev_instr sits one unit before the first while a frame has not started yet.
      const std::uint64_t unit = f.instr > c.first_unit ? (f.instr - c.first_unit) / 2 : 0;
      line = python311_line(c.linetable, c.code->first_line, unit);
    }
    out.frames[first + i].code = c.code;
    out.frames[first + i].line = line > 0 ? line : c.code->first_line;
  }
  return true;
}

std::size_t PythonStackDecoder::forget_unless(const std::function<bool(std::uint32_t)>& alive) {
  return std::erase_if(processes_, [&](const auto& kv) { return !alive(kv.first); });
}

}  // namespace eacgm::ingest
