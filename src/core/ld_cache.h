// The dynamic loader's cache (/etc/ld.so.cache) read without the loader: the agent's
// library scan finds libraries by it, and the hook finds the driver it copies
// (govern/hook/private_driver.cpp). No exceptions, no allocation beyond the result.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"

namespace eacgm {

// One entry of the dynamic loader's cache: soname (or file name) and full path.
struct CachedLibrary {
  std::string name;
  std::string path;
  std::int32_t flags = -1;  // ld.so.cache flags: 0x0303 is x86-64 libc6; -1 when from `ldconfig -p`
};
inline constexpr std::int32_t kLdCacheX86_64Libc6 = 0x0303;

// The cache's bytes parsed ("glibc-ld.so.cache1.1", alone or after the old "ld.so-1.7.0"
// table).
Result<std::vector<CachedLibrary>> parse_ld_cache(std::span<const unsigned char> bytes);

}  // namespace eacgm
