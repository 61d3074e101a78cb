// The web UI's server side: cookies and the Origin rule (web_session), the login and
// logout routes, POST routes with their Origin check, and the embedded assets' routes
// (types, entity tags, 304, cache headers, the content security policy).
#include "server/web_session.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "http_client.h"
#include "server/http_server.h"
#include "server/web_routes.h"

namespace eacgm::server {
namespace {

using testing::get;
using testing::Reply;
using testing::round_trip;

TEST(WebSession, ReadsCookies) {
  EXPECT_EQ(cookie_value("a=1; eacgm_session=tok; b=2", "eacgm_session"), "tok");
  EXPECT_EQ(cookie_value("eacgm_session=\"q\"", "eacgm_session"), "q");
  EXPECT_EQ(cookie_value("xeacgm_session=1", "eacgm_session"), std::nullopt);
  EXPECT_EQ(cookie_value("", "eacgm_session"), std::nullopt);
  EXPECT_EQ(cookie_value("eacgm_session", "eacgm_session"), std::nullopt);
}

TEST(WebSession, WritesCookies) {
  const std::string c = session_cookie("tok");
  EXPECT_TRUE(c.starts_with("eacgm_session=tok;"));
  EXPECT_NE(c.find("HttpOnly"), std::string::npos);
  EXPECT_NE(c.find("SameSite=Strict"), std::string::npos);
  EXPECT_EQ(marker_cookie().find("HttpOnly"), std::string::npos) << "the page reads the marker";
  EXPECT_NE(expired_cookie("eacgm_session", true).find("Max-Age=0"), std::string::npos);
}

TEST(WebSession, MatchesOriginToHost) {
  EXPECT_TRUE(origin_matches_host("http://127.0.0.1:9977", "127.0.0.1:9977"));
  EXPECT_TRUE(origin_matches_host("https://Node-1:9977", "node-1:9977"));
  EXPECT_FALSE(origin_matches_host("http://evil.example", "127.0.0.1:9977"));
  EXPECT_FALSE(origin_matches_host("http://127.0.0.1:9978", "127.0.0.1:9977"));
  EXPECT_FALSE(origin_matches_host("null", "127.0.0.1:9977"));
  EXPECT_FALSE(origin_matches_host("http://127.0.0.1:9977", ""));
}

TEST(WebSession, ParsesLoginBodies) {
  EXPECT_EQ(parse_login_body(R"({"token":"abc"})").token, "abc");
  EXPECT_FALSE(parse_login_body("token=abc").error.empty());
  EXPECT_FALSE(parse_login_body(R"({"token":""})").error.empty());
  EXPECT_FALSE(parse_login_body(R"({"token":5})").error.empty());
  EXPECT_FALSE(parse_login_body("[]").error.empty());
}

class TokenDir {
 public:
  TokenDir() : path_(std::filesystem::temp_directory_path() / ("eacgm_web_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TokenDir() { std::filesystem::remove_all(path_); }
  std::string token_file(const std::string& token) {
    const auto p = path_ / "token";
    std::ofstream(p) << token << "\n";
    ::chmod(p.c_str(), 0600);
    return p.string();
  }

 private:
  std::filesystem::path path_;
};

Reply post(std::uint16_t port, const std::string& path, const std::string& body, const std::string& headers) {
  return round_trip(port, "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                              "\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n" + headers + "\r\n" + body);
}

ServerOptions options_with(const std::string& token_file) {
  ServerOptions o;
  o.port = 0;
  o.keep_alive_timeout = std::chrono::seconds(1);
  o.token_file = token_file;
  return o;
}

TEST(WebSession, LoginSetsACookieTheServerAccepts) {
  TokenDir dir;
  const std::string token = "tok-123";
  HttpServer server;
  server.route("/api/v1/x", [](const Request&) { return Response::json("{}"); });
  std::string seen_body;
  server.post_route("/api/v1/act", [&](const Request& req) {
    seen_body = req.body;
    return Response::json("{\"done\":true}");
  });
  ASSERT_TRUE(server.start(options_with(dir.token_file(token))).ok());
  const auto port = server.port();
  const std::string origin = "Origin: http://127.0.0.1:" + std::to_string(port) + "\r\n";

  EXPECT_EQ(post(port, "/api/v1/login", R"({"token":"nope"})", origin).status, 401);
  EXPECT_EQ(post(port, "/api/v1/login", "garbage", origin).status, 400);
  EXPECT_EQ(post(port, "/api/v1/login", R"({"token":"tok-123"})", "Origin: http://evil.example\r\n").status,
            403);
  EXPECT_EQ(post(port, "/api/v1/login", R"({"token":"tok-123"})", "").status, 403)
      << "a login needs an Origin";
  const Reply ok = post(port, "/api/v1/login", R"({"token":"tok-123"})", origin);
  ASSERT_EQ(ok.status, 204) << ok.head << ok.body;
  EXPECT_NE(ok.head.find("Set-Cookie: eacgm_session=tok-123; Path=/; HttpOnly; SameSite=Strict"),
            std::string::npos)
      << ok.head;
  EXPECT_NE(ok.head.find("Set-Cookie: eacgm_login=1"), std::string::npos) << ok.head;

  const std::string cookie = "Cookie: eacgm_session=" + token + "\r\n";
  EXPECT_EQ(get(port, "/api/v1/x").status, 401);
  EXPECT_EQ(get(port, "/api/v1/x", "Cookie: eacgm_session=wrong\r\n").status, 401);
  EXPECT_EQ(get(port, "/api/v1/x", cookie).status, 200);

  // POST: the cookie needs a matching Origin; the bearer header needs none.
  EXPECT_EQ(post(port, "/api/v1/act", "{}", cookie).status, 403);
  EXPECT_EQ(post(port, "/api/v1/act", "{}", cookie + "Origin: http://evil.example\r\n").status, 403);
  EXPECT_EQ(post(port, "/api/v1/act", "{\"a\":1}", cookie + origin).status, 200);
  EXPECT_EQ(seen_body, "{\"a\":1}");
  EXPECT_EQ(post(port, "/api/v1/act", "{}", "Authorization: Bearer " + token + "\r\n").status, 200);
  EXPECT_EQ(post(port, "/api/v1/act", "{}", "").status, 401);
  EXPECT_EQ(get(port, "/api/v1/act", cookie).status, 405);
  EXPECT_EQ(post(port, "/api/v1/x", "{}", cookie + origin).status, 405);

  const Reply out = post(port, "/api/v1/logout", "{}", cookie + origin);
  EXPECT_EQ(out.status, 204);
  EXPECT_NE(out.head.find("Set-Cookie: eacgm_session=; Path=/; Max-Age=0"), std::string::npos) << out.head;
  server.stop();
}

TEST(WebSession, LoginWithoutATokenIsRefused) {
  HttpServer server;
  ASSERT_TRUE(server.start(options_with("")).ok());
  const auto port = server.port();
  const Reply r = post(port, "/api/v1/login", R"({"token":"x"})",
                       "Origin: http://127.0.0.1:" + std::to_string(port) + "\r\n");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("no token"), std::string::npos) << r.body;
  server.stop();
}

const unsigned char kIndex[] = {'<', 'p', '>', 'h', 'i', '<', '/', 'p', '>'};
const unsigned char kScript[] = {'x', '=', '1'};
const WebAsset kAssets[] = {
    {"/index.html", "text/html; charset=utf-8", "\"aaaa\"", kIndex, sizeof kIndex},
    {"/assets/app-1.js", "text/javascript; charset=utf-8", "\"bbbb\"", kScript, sizeof kScript},
};

TEST(WebRoutes, ServesAssetsWithTagsAndCacheHeaders) {
  HttpServer server;
  const auto paths = add_web_routes(server, kAssets);
  EXPECT_EQ(paths, (std::vector<std::string>{"/index.html", "/", "/assets/app-1.js"}));
  ASSERT_TRUE(server.start(options_with("")).ok());
  const auto port = server.port();
  Reply r = get(port, "/");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "<p>hi</p>");
  EXPECT_EQ(r.header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(r.header("ETag"), "\"aaaa\"");
  EXPECT_EQ(r.header("Cache-Control"), "no-cache");
  EXPECT_NE(r.header("Content-Security-Policy").find("connect-src 'self'"), std::string::npos);
  r = get(port, "/", "If-None-Match: \"zz\", W/\"aaaa\"\r\n");
  EXPECT_EQ(r.status, 304);
  EXPECT_TRUE(r.body.empty());
  r = get(port, "/assets/app-1.js");
  EXPECT_EQ(r.body, "x=1");
  EXPECT_EQ(r.header("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(r.header("Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(get(port, "/assets/app-2.js").status, 404);
  server.stop();
}

TEST(WebRoutes, TheBuildEmbedsTheUi) {
  bool index = false;
  for (const WebAsset& a : web_assets()) {
    EXPECT_GT(a.size, 0u) << a.path;
    EXPECT_TRUE(a.etag.starts_with("\"")) << a.path;
    if (a.path == "/index.html") {
      index = true;
      const std::string text(reinterpret_cast<const char*>(a.data), a.size);
      EXPECT_NE(text.find("<script type=\"module\""), std::string::npos);
      EXPECT_EQ(text.find("http"), std::string::npos) << "no absolute URL: nothing leaves the origin";
    }
  }
  EXPECT_TRUE(index);
}

}  // namespace
}  // namespace eacgm::server
