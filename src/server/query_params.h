// Query parameters of `eacgm serve`'s routes: whole numbers in a range, `pid` and `pids`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "server/http_server.h"

namespace eacgm::server {

// A whole decimal number in [min, max], else nullopt.
std::optional<std::uint64_t> parse_number(const std::string& text, std::uint64_t min, std::uint64_t max);

// The request's `pid` parameter: nullopt when absent, an error ("pid: a process id") when
// it is not a whole number from 1 to 2^32 - 1.
Result<std::optional<std::uint32_t>> pid_param(const server::Request& req);

// The request's `pids` parameter: process ids separated by commas, at most `max`, each
// once (in the order given); an error when absent, empty, too many or not process ids.
Result<std::vector<std::uint32_t>> pids_param(const server::Request& req, std::size_t max);

}  // namespace eacgm::server
