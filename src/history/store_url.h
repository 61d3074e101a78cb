// Store URLs: `sqlite:PATH` and `postgresql://user:password@host:port/db?...` (or
// `postgres://`, or a libpq key=value string). What is printed of one never holds its
// password.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace eacgm::history {

enum class StoreKind { kSqlite, kPostgres };

struct StoreUrl {
  StoreKind kind = StoreKind::kSqlite;
  std::string target;  // the SQLite path, or the libpq connection string
};

// The default for `serve`.
inline constexpr std::string_view kDefaultStoreUrl = "sqlite:/var/lib/eacgm/eacgm.db";

Result<StoreUrl> parse_store_url(const std::string& url);
// The URL with its password (URL userinfo, `password=` key) replaced by "***".
std::string redact_store_url(std::string_view url);

}  // namespace eacgm::history
