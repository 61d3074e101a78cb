// Query parameter parsing for the daemon's routes.
#include "server/query_params.h"

#include <fmt/format.h>

#include <algorithm>

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

Result<std::vector<std::uint32_t>> pids_param(const server::Request& req, std::size_t max) {
  const auto text = req.param("pids");
  const std::string usage = fmt::format("pids: process ids separated by commas (at most {})", max);
  if (!text || text->empty()) return make_error(ErrorKind::kUsage, usage);
  std::vector<std::uint32_t> pids;
  std::size_t from = 0;
  while (from <= text->size()) {
    const std::size_t comma = std::min(text->find(',', from), text->size());
    auto v = parse_number(text->substr(from, comma - from), 1, 0xffffffffu);
    if (!v || pids.size() == max) return make_error(ErrorKind::kUsage, usage);
    const auto pid = static_cast<std::uint32_t>(*v);
    if (std::find(pids.begin(), pids.end(), pid) == pids.end()) pids.push_back(pid);
    from = comma + 1;
  }
  return pids;
}

}  // namespace eacgm::server
