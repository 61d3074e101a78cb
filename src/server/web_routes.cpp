// Serves the embedded web UI. Vite names the files under /assets/ by their content's
// hash, so those may be cached for good; index.html names them, so it is revalidated.
#include "server/web_routes.h"

#include <string>

namespace eacgm::server {
namespace {

// Only the page's own origin: no CDN, no request elsewhere. Styles set through the
// CSSOM (uPlot, d3) need no 'unsafe-inline'; style attributes in markup do.
constexpr std::string_view kPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

bool tag_listed(std::string_view list, std::string_view tag) {
  if (list == "*") return true;
  std::size_t pos = 0;
  while (pos < list.size()) {
    std::size_t end = list.find(',', pos);
    if (end == std::string_view::npos) end = list.size();
    std::string_view item = list.substr(pos, end - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.starts_with("W/")) item.remove_prefix(2);
    if (item == tag) return true;
    pos = end + 1;
  }
  return false;
}

}  // namespace

Response web_asset_response(const WebAsset& asset, std::string_view if_none_match) {
  Response r;
  r.headers.emplace_back("ETag", std::string(asset.etag));
  r.headers.emplace_back("Cache-Control", asset.path.starts_with("/assets/")
                                              ? "public, max-age=31536000, immutable"
                                              : "no-cache");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  if (asset.content_type.starts_with("text/html")) {
    r.headers.emplace_back("Content-Security-Policy", std::string(kPolicy));
    r.headers.emplace_back("X-Frame-Options", "DENY");
  }
  r.content_type = std::string(asset.content_type);
  if (!if_none_match.empty() && tag_listed(if_none_match, asset.etag)) {
    r.status = 304;
    return r;
  }
  r.body.assign(reinterpret_cast<const char*>(asset.data), asset.size);
  return r;
}

std::vector<std::string> add_web_routes(HttpServer& http, std::span<const WebAsset> assets) {
  std::vector<std::string> paths;
  for (const WebAsset& asset : assets) {
    auto handler = [&asset](const Request& req) {
      return web_asset_response(asset, req.header("If-None-Match"));
    };
    http.route(std::string(asset.path), handler);
    paths.emplace_back(asset.path);
    if (asset.path == "/index.html") {
      http.route("/", handler);
      paths.emplace_back("/");
    }
  }
  return paths;
}

}  // namespace eacgm::server
