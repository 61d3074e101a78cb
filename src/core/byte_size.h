// Byte sizes as people write them: "1GiB", "512M", "64k", "1000000" (bytes). k/M/G/T
// and KiB/MiB/GiB/TiB are powers of 1024 (as tools that bound output sizes mean them);
// KB/MB/GB/TB are powers of 1000.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.h"

namespace eacgm {

Result<std::uint64_t> parse_byte_size(std::string_view text);
// "1 GiB", "512 MiB", "1.5 KiB", "100 B".
std::string format_byte_size(std::uint64_t bytes);

}  // namespace eacgm
