// The web UI's session: the login form's cookie (HttpOnly, SameSite=Strict; it holds the
// token, so the browser sends what a bearer header would, and never in a URL) and the
// Origin rule for requests that change state (POST), which a cookie alone must not allow
// from another site.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace eacgm::server {

inline constexpr std::string_view kSessionCookie = "eacgm_session";
// Not secret, readable by the page: it says a session is in use (the page then offers
// "Log out"), since the session cookie itself is HttpOnly.
inline constexpr std::string_view kLoginMarkerCookie = "eacgm_login";

// The value of cookie `name` in a Cookie header ("a=1; b=2"); nullopt when absent.
std::optional<std::string> cookie_value(std::string_view header, std::string_view name);

// The Set-Cookie values that start and end a session.
std::string session_cookie(std::string_view token);
std::string marker_cookie();
std::string expired_cookie(std::string_view name, bool http_only);

// Whether an Origin header names the server the request was sent to (its Host header):
// "http://HOST" or "https://HOST", the host (and port) compared case-insensitively.
bool origin_matches_host(std::string_view origin, std::string_view host);

// The token of a login body, {"token":"..."}; an error message for anything else.
struct LoginBody {
  std::string token;
  std::string error;  // "" when the body was good
};
LoginBody parse_login_body(std::string_view body);

}  // namespace eacgm::server
