// Cookie parsing and writing for the login form, and the Origin check of POSTs.
#include "server/web_session.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "core/ascii_text.h"

namespace eacgm::server {

std::optional<std::string> cookie_value(std::string_view header, std::string_view name) {
  std::size_t pos = 0;
  while (pos <= header.size()) {
    std::size_t end = header.find(';', pos);
    if (end == std::string_view::npos) end = header.size();
    const std::string_view item = trim(header.substr(pos, end - pos));
    const std::size_t eq = item.find('=');
    if (eq != std::string_view::npos && trim(item.substr(0, eq)) == name) {
      std::string_view value = trim(item.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
        value = value.substr(1, value.size() - 2);
      return std::string(value);
    }
    pos = end + 1;
  }
  return std::nullopt;
}

std::string session_cookie(std::string_view token) {
  return std::string(kSessionCookie) + "=" + std::string(token) + "; Path=/; HttpOnly; SameSite=Strict";
}

std::string marker_cookie() { return std::string(kLoginMarkerCookie) + "=1; Path=/; SameSite=Strict"; }

std::string expired_cookie(std::string_view name, bool http_only) {
  return std::string(name) + "=; Path=/; Max-Age=0; SameSite=Strict" + (http_only ? "; HttpOnly" : "");
}

bool origin_matches_host(std::string_view origin, std::string_view host) {
  if (host.empty()) return false;
  for (const std::string_view scheme : {"http://", "https://"}) {
    if (origin.size() > scheme.size() && iequals(origin.substr(0, scheme.size()), scheme)) {
      return iequals(origin.substr(scheme.size()), host);
    }
  }
  return false;
}

LoginBody parse_login_body(std::string_view body) {
  LoginBody out;
  const auto doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    out.error = "the body must be JSON: {\"token\":\"...\"}";
    return out;
  }
  const auto it = doc.find("token");
  if (it == doc.end() || !it->is_string() || it->get<std::string>().empty()) {
    out.error = "token: a non-empty string";
    return out;
  }
  out.token = it->get<std::string>();
  return out;
}

}  // namespace eacgm::server
