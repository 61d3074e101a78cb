// Query parameter parsing for the daemon's routes.
#include "server/query_params.h"

namespace eacgm::server {

std::optional<std::uint64_t> parse_number(const std::string& text, std::uint64_t min, std::uint64_t max) {
  if (text.empty() || text.size() > 10) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  if (v < min || v > max) return std::nullopt;
  return v;
}

Result<std::optional<std::uint32_t>> pid_param(const server::Request& req) {
  auto text = req.param("pid");
  if (!text) return std::optional<std::uint32_t>{};
  auto v = parse_number(*text, 1, 0xffffffffu);
  if (!v) return make_error(ErrorKind::kUsage, "pid: a process id");
  return std::optional<std::uint32_t>{static_cast<std::uint32_t>(*v)};
}

}  // namespace eacgm::server
