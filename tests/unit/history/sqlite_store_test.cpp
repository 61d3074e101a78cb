// The SQLite history where it differs from PostgreSQL's (the checks both answer alike are
// store_test.cpp's): a named file that cannot be created is an error naming it.
#include "history/sqlite_store.h"

#include <gtest/gtest.h>

#include <string>

namespace eacgm::history {
namespace {

TEST(SqliteStore, ANamedFileThatCannotBeCreatedIsAnError) {
  auto store = SqliteStore::open("/proc/eacgm-no/such.db");
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().find("store sqlite:/proc/eacgm-no/such.db"), std::string::npos) << store.error();
}

}  // namespace
}  // namespace eacgm::history
