// The bearer token: loading its file safely, comparing guesses, and the rule that only
// loopback listeners may go without one.
#include "server/access_token.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "core/ascii_text.h"
#include "core/unique_fd.h"
#include "server/listen_address.h"

namespace eacgm::server {

Result<std::string> load_token_file(const std::string& path) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  if (!fd) return make_error(fmt::format("token file {}: {}", path, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return make_error(fmt::format("token file {}: {}", path, std::strerror(errno)));
  if (!S_ISREG(st.st_mode)) return make_error(fmt::format("token file {} is not a regular file", path));
  if (st.st_uid != ::geteuid()) {
    return make_error(fmt::format("token file {} belongs to uid {}, not to the user running eacgm (uid {})",
                                  path, st.st_uid, ::geteuid()));
  }
  if ((st.st_mode & 077) != 0) {
    return make_error(fmt::format("token file {} has mode {:04o}, open to group or others: chmod 600 {}",
                                  path, st.st_mode & 07777, path));
  }
  constexpr std::size_t kMax = 4096;
  std::string buf(kMax + 2, '\0');
  std::size_t used = 0;
  while (used < buf.size()) {
    const ssize_t n = ::read(fd.get(), buf.data() + used, buf.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(fmt::format("token file {}: {}", path, std::strerror(errno)));
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  buf.resize(used);
  std::string_view t = buf;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  if (t.empty()) return make_error(fmt::format("token file {} is empty", path));
  if (t.size() > kMax)
    return make_error(fmt::format("token file {}: the token is longer than {} bytes", path, kMax));
  for (const char c : t) {
    if (!std::isgraph(static_cast<unsigned char>(c))) {
      return make_error(fmt::format("token file {}: the token has spaces or control characters", path));
    }
  }
  return std::string(t);
}

bool constant_time_equal(std::string_view a, std::string_view b) {
  const std::size_t n = std::max(a.size(), b.size());
  volatile unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

bool bearer_matches(std::string_view authorization, std::string_view token) {
  constexpr std::string_view kScheme = "bearer ";
  if (authorization.size() < kScheme.size() || !iequals(authorization.substr(0, kScheme.size()), kScheme)) {
    return false;
  }
  std::string_view given = authorization.substr(kScheme.size());
  while (!given.empty() && given.front() == ' ') given.remove_prefix(1);
  return constant_time_equal(given, token);
}

Result<std::string> server_token(const std::string& token_file, std::string_view address,
                                 std::string_view where) {
  if (!token_file.empty()) {
    auto t = load_token_file(token_file);
    if (!t) return make_error(t.error());
    return std::move(*t);
  }
  if (!is_loopback_address(address)) {
    return make_error(fmt::format(
        "cannot listen on {} without a token: pass --token-file FILE (mode 0600) or listen on 127.0.0.1",
        where));
  }
  return std::string();
}

}  // namespace eacgm::server
