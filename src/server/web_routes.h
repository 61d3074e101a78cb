// The web UI's routes: `/` (index.html) and each embedded asset, with entity tags,
// cache headers and a content security policy that keeps every request on the origin.
#pragma once

#include <string>
#include <vector>

#include "server/http_server.h"
#include "server/web_assets.h"

namespace eacgm::server {

// Adds GET / and one route per asset to `http`; returns the paths added, which need no
// token (they hold no data: the page asks for a token when the API answers 401).
std::vector<std::string> add_web_routes(HttpServer& http, std::span<const WebAsset> assets);

// The response for one asset: 304 when `if_none_match` names its tag; hashed files under
// /assets/ are cached for a year, index.html revalidated every time.
Response web_asset_response(const WebAsset& asset, std::string_view if_none_match);

}  // namespace eacgm::server
