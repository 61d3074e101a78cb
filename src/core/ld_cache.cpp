// The dynamic loader's cache parsed (core/ld_cache.h).
#include "core/ld_cache.h"

#include <cstring>
#include <optional>
#include <string_view>

namespace eacgm {
namespace {

std::uint32_t load_u32(std::span<const unsigned char> b, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

// A NUL-terminated string at `at`, or nullopt when it runs off the end (corrupt cache).
std::optional<std::string> load_string(std::span<const unsigned char> b, std::size_t at) {
  if (at >= b.size()) {
    return std::nullopt;
  }
  const void* nul = std::memchr(b.data() + at, '\0', b.size() - at);
  if (nul == nullptr) {
    return std::nullopt;
  }
  return std::string(reinterpret_cast<const char*>(b.data() + at),
                     static_cast<const unsigned char*>(nul) - (b.data() + at));
}

}  // namespace

Result<std::vector<CachedLibrary>> parse_ld_cache(std::span<const unsigned char> bytes) {
  static constexpr std::string_view kOldMagic = "ld.so-1.7.0";
  static constexpr std::string_view kNewMagic = "glibc-ld.so.cache1.1";
  static constexpr std::size_t kNewHeader = 48;  // magic+version, nlibs, len_strings, flags, pad, ext, unused
  static constexpr std::size_t kNewEntry = 24;   // flags, key, value, osversion, hwcap
  static constexpr std::size_t kOldEntry = 12;   // flags, key, value
  auto starts_with = [&](std::size_t at, std::string_view magic) {
    return bytes.size() >= at + magic.size() &&
           std::memcmp(bytes.data() + at, magic.data(), magic.size()) == 0;
  };
  std::size_t start = 0;
  if (!starts_with(0, kNewMagic)) {
    if (!starts_with(0, kOldMagic)) {
      return make_error("not an ld.so cache (unknown magic)");
    }
    // Old table first (glibc < 2.32 writes both); the new one follows, 8-byte aligned.
    if (bytes.size() < 16) {
      return make_error("truncated ld.so cache header");
    }
    const std::uint64_t old_count = load_u32(bytes, 12);
    start = static_cast<std::size_t>((16 + old_count * kOldEntry + 7) & ~std::uint64_t{7});
    if (!starts_with(start, kNewMagic)) {
      return make_error("old-format-only ld.so cache (no glibc-ld.so.cache1.1 table)");
    }
  }
  if (bytes.size() < start + kNewHeader) {
    return make_error("truncated ld.so cache header");
  }
  const std::uint32_t count = load_u32(bytes, start + 20);
  const unsigned char endian = bytes[start + 28];
  // 0: unknown (older writers), 2: little endian, 3: big endian.
  const unsigned char host = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 2 : 3;
  if (endian != 0 && endian != host) {
    return make_error("ld.so cache written for the other byte order");
  }
  if (static_cast<std::uint64_t>(count) * kNewEntry > bytes.size() - start - kNewHeader) {
    return make_error("truncated ld.so cache: " + std::to_string(count) + " entries do not fit");
  }
  std::vector<CachedLibrary> out;
  out.reserve(count);
  // String offsets in the new format count from the start of its header.
  const std::span<const unsigned char> table = bytes.subspan(start);
  for (std::uint32_t i = 0; i < count; ++i) {
    const std::size_t e = kNewHeader + static_cast<std::size_t>(i) * kNewEntry;
    std::int32_t flags = 0;
    std::memcpy(&flags, table.data() + e, sizeof flags);
    auto name = load_string(table, load_u32(table, e + 4));
    auto path = load_string(table, load_u32(table, e + 8));
    if (!name || !path) {
      return make_error("corrupt ld.so cache: entry " + std::to_string(i) + " points outside the file");
    }
    out.push_back(CachedLibrary{std::move(*name), std::move(*path), flags});
  }
  return out;
}

}  // namespace eacgm
