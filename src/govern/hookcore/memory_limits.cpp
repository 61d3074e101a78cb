// Parsing of memory sizes and of the limit variables, without exceptions (it runs
// inside the traced program).
#include "govern/hookcore/memory_limits.h"

#include <cstdio>

namespace eacgm::govern {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool unit_multiplier(std::string_view unit, std::uint64_t* mult) {
  std::string u;
  for (char c : unit) u.push_back(lower(c));
  struct Unit {
    const char* name;
    std::uint64_t mult;
  };
  static constexpr Unit kUnits[] = {
      {"", 1},
      {"b", 1},
      {"k", 1ull << 10},
      {"kib", 1ull << 10},
      {"kb", 1000ull},
      {"m", 1ull << 20},
      {"mib", 1ull << 20},
      {"mb", 1000000ull},
      {"g", 1ull << 30},
      {"gib", 1ull << 30},
      {"gb", 1000000000ull},
      {"t", 1ull << 40},
      {"tib", 1ull << 40},
      {"tb", 1000000000000ull},
  };
  for (const Unit& k : kUnits) {
    if (u == k.name) {
      *mult = k.mult;
      return true;
    }
  }
  return false;
}

}  // namespace

bool parse_memory_size(std::string_view text, std::uint64_t* bytes) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::size_t i = 0;
  std::uint64_t whole = 0;
  bool digits = false;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
    if (whole > (~0ull - 9) / 10) return false;
    whole = whole * 10 + static_cast<std::uint64_t>(text[i] - '0');
    digits = true;
  }
  // Up to 9 decimals, kept as an exact fraction (no floating point).
  std::uint64_t frac = 0;
  std::uint64_t frac_scale = 1;
  if (i < text.size() && text[i] == '.') {
    ++i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (frac_scale < 1000000000ull) {
        frac = frac * 10 + static_cast<std::uint64_t>(text[i] - '0');
        frac_scale *= 10;
      }
      digits = true;
    }
  }
  if (!digits) return false;
  std::string_view unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  std::uint64_t mult = 1;
  if (!unit_multiplier(unit, &mult)) return false;
  if (whole != 0 && mult > ~0ull / whole) return false;
  std::uint64_t total = whole * mult;
  // frac / frac_scale * mult, rounded down; mult <= 2^40 and frac < 10^9 fit in 128 bits.
  unsigned __int128 part = static_cast<unsigned __int128>(frac) * mult / frac_scale;
  if (part > ~0ull - total) return false;
  *bytes = total + static_cast<std::uint64_t>(part);
  return true;
}

MemoryLimits read_memory_limits(EnvLookup lookup, void* context, std::string* warnings) {
  MemoryLimits limits;
  auto read = [&](const char* name, std::uint64_t* out) -> bool {
    const char* v = lookup(name, context);
    if (v == nullptr || *v == '\0') return false;
    std::uint64_t bytes = 0;
    if (!parse_memory_size(v, &bytes)) {
      if (warnings != nullptr) {
        *warnings += "eacgm hook: ignoring ";
        *warnings += name;
        *warnings += "=";
        *warnings += v;
        *warnings += ": not a memory size (write for example 1GiB, 512MiB, 1g or 1024m; 0 means no limit)\n";
      }
      return false;
    }
    *out = bytes;
    return true;
  };
  std::uint64_t eacgm_all = kNoLimit;
  std::uint64_t hami_all = kNoLimit;
  bool has_eacgm_all = read("EACGM_MEMORY_LIMIT", &eacgm_all);
  bool has_hami_all = read("CUDA_DEVICE_MEMORY_LIMIT", &hami_all);
  for (int d = 0; d < kMaxDevices; ++d) {
    char name[48];
    std::uint64_t v = kNoLimit;
    std::snprintf(name, sizeof name, "EACGM_MEMORY_LIMIT_%d", d);
    if (read(name, &v)) {
      limits.per_device[d] = v;
      continue;
    }
    if (has_eacgm_all) {
      limits.per_device[d] = eacgm_all;
      continue;
    }
    std::snprintf(name, sizeof name, "CUDA_DEVICE_MEMORY_LIMIT_%d", d);
    if (read(name, &v)) {
      limits.per_device[d] = v;
      continue;
    }
    if (has_hami_all) limits.per_device[d] = hami_all;
  }
  return limits;
}

}  // namespace eacgm::govern
