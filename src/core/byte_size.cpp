// Parsing and printing of byte sizes.
#include "core/byte_size.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <limits>

namespace eacgm {

Result<std::uint64_t> parse_byte_size(std::string_view text) {
  auto bad = [&] {
    return make_error(
        ErrorKind::kUsage,
        fmt::format("invalid size \"{}\": use a number with an optional unit (e.g. 500M, 1GiB, 0)", text));
  };
  std::size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) return bad();
  std::uint64_t n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + i, n);
  if (ec != std::errc{} || p != text.data() + i) return bad();
  std::string unit;
  for (char c : text.substr(i)) {
    if (c != ' ') unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::uint64_t mult = 1;
  if (unit.empty() || unit == "b") {
    mult = 1;
  } else if (unit == "k" || unit == "kib") {
    mult = 1ull << 10;
  } else if (unit == "m" || unit == "mib") {
    mult = 1ull << 20;
  } else if (unit == "g" || unit == "gib") {
    mult = 1ull << 30;
  } else if (unit == "t" || unit == "tib") {
    mult = 1ull << 40;
  } else if (unit == "kb") {
    mult = 1000;
  } else if (unit == "mb") {
    mult = 1000ull * 1000;
  } else if (unit == "gb") {
    mult = 1000ull * 1000 * 1000;
  } else if (unit == "tb") {
    mult = 1000ull * 1000 * 1000 * 1000;
  } else {
    return bad();
  }
  if (n > std::numeric_limits<std::uint64_t>::max() / mult) {
    return make_error(ErrorKind::kUsage, fmt::format("size \"{}\" is too large", text));
  }
  return n * mult;
}

std::string format_byte_size(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  if (u == 0) return fmt::format("{} B", bytes);
  if (v == static_cast<double>(static_cast<std::uint64_t>(v)))
    return fmt::format("{} {}", static_cast<std::uint64_t>(v), kUnits[u]);
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

}  // namespace eacgm
