// Store URL parsing and redaction.
#include "history/store_url.h"

#include <regex>

namespace eacgm::history {

Result<StoreUrl> parse_store_url(const std::string& url) {
  if (url.rfind("sqlite:", 0) == 0) {
    std::string path = url.substr(7);
    if (path.rfind("//", 0) == 0) path = path.substr(2);  // sqlite:///var/... as well
    if (path.empty())
      return make_error(ErrorKind::kUsage, "store URL \"sqlite:\" names no file; use sqlite:PATH");
    return StoreUrl{StoreKind::kSqlite, path};
  }
  if (url.rfind("postgresql://", 0) == 0 || url.rfind("postgres://", 0) == 0) {
    return StoreUrl{StoreKind::kPostgres, url};
  }
  if (url.find("dbname=") != std::string::npos || url.find("host=") != std::string::npos) {
    return StoreUrl{StoreKind::kPostgres, url};
  }
  return make_error(ErrorKind::kUsage,
                    "store URL \"" + redact_store_url(url) +
                        "\" is not one eacgm knows; use sqlite:PATH or postgresql://USER@HOST/DB");
}

std::string redact_store_url(std::string_view url) {
  static const std::regex userinfo(R"(^([a-z]+://[^:/@]*):[^@]*@)");
  static const std::regex key(R"((password\s*=\s*)('[^']*'|[^\s&]+))");
  std::string s = std::regex_replace(std::string(url), userinfo, "$1:***@");
  return std::regex_replace(s, key, "$1***");
}

}  // namespace eacgm::history
