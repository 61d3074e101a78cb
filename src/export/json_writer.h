// Fast JSON pieces for the event hot path: integers, hex and escaped strings
// appended straight into a memory buffer (no format-string parsing per value).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>

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

// One field of an object of unsigned numbers: its key (plain ASCII, written as it is) and
// value.
using UintField = std::pair<std::string_view, std::uint64_t>;

// {"key":value,...}
inline void put_uint_object(fmt::memory_buffer& out, std::span<const UintField> fields) {
  out.push_back('{');
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.push_back('"');
    put(out, fields[i].first);
    put(out, "\":");
    put_uint(out, fields[i].second);
  }
  out.push_back('}');
}

// The length of the well-formed UTF-8 sequence at the start of `s` (RFC 3629: no
// overlong forms, no surrogates, nothing above U+10FFFF), or 0 when it is not one.
inline std::size_t utf8_sequence_length(std::string_view s) {
  auto at = [&s](std::size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  auto cont = [&at](std::size_t i, unsigned lo = 0x80, unsigned hi = 0xbf) {
    return at(i) >= lo && at(i) <= hi;
  };
  const unsigned c = at(0);
  if (c < 0x80) return s.empty() ? 0 : 1;
  if (c >= 0xc2 && c <= 0xdf) return cont(1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    const bool second = c == 0xe0 ? cont(1, 0xa0) : c == 0xed ? cont(1, 0x80, 0x9f) : cont(1);
    return second && cont(2) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    const bool second = c == 0xf0 ? cont(1, 0x90) : c == 0xf4 ? cont(1, 0x80, 0x8f) : cont(1);
    return second && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// A JSON string with quotes; plain ASCII runs are copied in one go. The names it is
// given come from traced processes (thread names, kernel names read from their memory)
// and may be any bytes, so each byte of an ill-formed UTF-8 sequence becomes U+FFFD:
// the output stays valid JSON for strict parsers (Python's json, nlohmann).
inline void put_json_string(fmt::memory_buffer& out, std::string_view s) {
  out.push_back('"');
  std::size_t run = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') continue;
    if (c >= 0x80) {
      if (const std::size_t n = utf8_sequence_length(s.substr(i)); n > 0) {
        i += n - 1;
        continue;
      }
    }
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
      default:
        if (c >= 0x80) {
          put(out, "\\ufffd");
        } else {
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
