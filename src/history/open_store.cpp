// open_store: the URL's kind picks the store.
#include "history/postgres_store.h"
#include "history/sqlite_store.h"
#include "history/store.h"
#include "history/store_url.h"

namespace eacgm::history {

Result<std::unique_ptr<Store>> open_store(const std::string& url, StoreAccess access) {
  auto parsed = parse_store_url(url);
  if (!parsed) return std::move(parsed).take_error();
  if (parsed->kind == StoreKind::kSqlite) {
    auto s = SqliteStore::open(parsed->target, access);
    if (!s) return std::move(s).take_error();
    return std::unique_ptr<Store>(std::move(s).value());
  }
  auto s = PostgresStore::open(parsed->target, access);
  if (!s) return std::move(s).take_error();
  return std::unique_ptr<Store>(std::move(s).value());
}

}  // namespace eacgm::history
