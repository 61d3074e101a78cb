// Fast JSON pieces for the event hot path: integers, hex and escaped strings
// appended straight into a memory buffer (no format-string parsing per value).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string_view>

namespace eacgm::exporting {

inline void put(fmt::memory_buffer& out, std::string_view s) { out.append(s.data(), s.data() + s.size()); }

inline void put_uint(fmt::memory_buffer& out, std::uint64_t v) {
  fmt::format_int f(v);
  out.append(f.data(), f.data() + f.size());
}

inline void put_int(fmt::memory_buffer& out, std::int64_t v) {
  fmt::format_int f(v);
  out.append(f.data(), f.data() + f.size());
}

// 0x-prefixed lowercase hex, as `{:#x}` would write it.
inline void put_hex(fmt::memory_buffer& out, std::uint64_t v) {
  char buf[18];
  char* end = buf + sizeof(buf);
  char* p = end;
  do {
    *--p = "0123456789abcdef"[v & 0xf];
    v >>= 4;
  } while (v != 0);
  *--p = 'x';
  *--p = '0';
  out.append(p, end);
}

// A JSON string with quotes; plain ASCII runs are copied in one go.
inline void put_json_string(fmt::memory_buffer& out, std::string_view s) {
  out.push_back('"');
  std::size_t run = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, s.data() + i);
    switch (c) {
      case '"':
        put(out, "\\\"");
        break;
      case '\\':
        put(out, "\\\\");
        break;
      case '\n':
        put(out, "\\n");
        break;
      case '\r':
        put(out, "\\r");
        break;
      case '\t':
        put(out, "\\t");
        break;
      default: {
        char esc[7] = {'\\', 'u', '0', '0', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 0xf], 0};
        out.append(esc, esc + 6);
      }
    }
    run = i + 1;
  }
  out.append(s.data() + run, s.data() + s.size());
  out.push_back('"');
}

}  // namespace eacgm::exporting
