// The web UI's files (web/, built by Vite), embedded into the binary at build time by
// cmake/embed_web.cmake: path, type, entity tag and bytes of each.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

namespace eacgm::server {

struct WebAsset {
  std::string_view path;          // "/index.html", "/assets/index-1a2b3c.js"
  std::string_view content_type;  // from the file's extension
  std::string_view etag;          // "\"<first 16 hex digits of its SHA-256>\""
  const unsigned char* data;
  std::size_t size;
};

// Every embedded file (generated: build/generated/web_assets_data.cpp).
std::span<const WebAsset> web_assets();

}  // namespace eacgm::server
