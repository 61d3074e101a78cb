// The three line-table formats the sampler meets (3.8 and 3.9, 3.10, 3.11 onwards).
#include "ingest/python_lines.h"

namespace eacgm::ingest {
namespace {

// Reads a location-table varint: 6 bits per byte, low bits first, 0x40 = more follow.
bool read_varint(std::span<const std::uint8_t> t, std::size_t& at, std::uint32_t& out) {
  out = 0;
  for (unsigned shift = 0; at < t.size() && shift < 32; shift += 6) {
    const std::uint8_t b = t[at++];
    out |= static_cast<std::uint32_t>(b & 0x3f) << shift;
    if ((b & 0x40) == 0) return true;
  }
  return false;
}

bool read_svarint(std::span<const std::uint8_t> t, std::size_t& at, int& out) {
  std::uint32_t v = 0;
  if (!read_varint(t, at, v)) return false;
  out = (v & 1) ? -static_cast<int>(v >> 1) : static_cast<int>(v >> 1);
  return true;
}

}  // namespace

int python_lnotab_line(std::span<const std::uint8_t> table, int first_line, std::uint64_t byte_offset) {
  int line = first_line;
  std::uint64_t addr = 0;
  for (std::size_t i = 0; i + 1 < table.size(); i += 2) {
    addr += table[i];
    if (addr > byte_offset) break;
    line += static_cast<std::int8_t>(table[i + 1]);
  }
  return line;
}

int python310_line(std::span<const std::uint8_t> table, int first_line, std::uint64_t byte_offset) {
  int line = first_line;
  std::uint64_t end = 0;
  for (std::size_t i = 0; i + 1 < table.size(); i += 2) {
    const std::uint64_t start = end;
    end += table[i];
    const auto delta = static_cast<std::int8_t>(table[i + 1]);
    const bool has_line = delta != -128;
    if (has_line) line += delta;
    if (byte_offset >= start && byte_offset < end) return has_line ? line : -1;
  }
  return -1;
}

int python311_line(std::span<const std::uint8_t> table, int first_line, std::uint64_t unit) {
  int line = first_line;
  std::uint64_t end = 0;
  std::size_t at = 0;
  while (at < table.size()) {
    const std::uint8_t head = table[at++];
    if ((head & 0x80) == 0) return -1;  // not at an entry: a table we do not understand
    const unsigned code = (head >> 3) & 15;
    const std::uint64_t start = end;
    end += (head & 7) + 1;
    bool has_line = true;
    if (code == 15) {
      has_line = false;  // no location
    } else if (code == 14) {
      int delta = 0;
      std::uint32_t skip = 0;
      if (!read_svarint(table, at, delta) || !read_varint(table, at, skip) || !read_varint(table, at, skip) ||
          !read_varint(table, at, skip)) {
        return -1;
      }
      line += delta;
    } else if (code == 13) {
      int delta = 0;
      if (!read_svarint(table, at, delta)) return -1;
      line += delta;
    } else if (code >= 10) {
      line += static_cast<int>(code) - 10;
      at += 2;  // start and end column
    } else {
      at += 1;  // short form: columns only
    }
    if (unit >= start && unit < end) return has_line ? line : -1;
  }
  return -1;
}

}  // namespace eacgm::ingest
