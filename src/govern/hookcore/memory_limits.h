// Memory limits from the environment: EACGM_MEMORY_LIMIT[_<i>] and HAMi-core's
// CUDA_DEVICE_MEMORY_LIMIT[_<i>], per CUDA device ordinal. "0" (or unset) means no limit.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace eacgm::govern {

inline constexpr int kMaxDevices = 64;
inline constexpr std::uint64_t kNoLimit = 0;

// "1GiB", "512MiB", "1g", "1024m", "64k", "1.5GiB", "1073741824". k/m/g/t and
// KiB/MiB/GiB/TiB are powers of 1024 (HAMi-core's "1g" and "1024m" mean GiB); KB/MB/GB/TB
// are powers of 1000; B or no unit is bytes. False on anything else or on overflow.
bool parse_memory_size(std::string_view text, std::uint64_t* bytes);

struct MemoryLimits {
  std::array<std::uint64_t, kMaxDevices> per_device{};  // kNoLimit where none
};

// Reads the limits through `lookup` (getenv in the hook, a map in tests). Precedence per
// device: EACGM_MEMORY_LIMIT_<i>, EACGM_MEMORY_LIMIT, CUDA_DEVICE_MEMORY_LIMIT_<i>,
// CUDA_DEVICE_MEMORY_LIMIT. A value that is not a size is ignored with a line in
// `warnings` naming the variable and the accepted forms (the program is never stopped
// over a bad value).
using EnvLookup = const char* (*)(const char* name, void* context);
MemoryLimits read_memory_limits(EnvLookup lookup, void* context, std::string* warnings);

}  // namespace eacgm::govern
