// The SQLite history where it differs from PostgreSQL's (the checks both answer alike are
// store_test.cpp's): a named file that cannot be created is an error naming it; a reader
// never makes a store, and readers query while the writer holds its transaction (WAL).
#include "history/sqlite_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "store_batches.h"

namespace eacgm::history {
namespace {

TEST(SqliteStore, ANamedFileThatCannotBeCreatedIsAnError) {
  auto store = SqliteStore::open("/proc/eacgm-no/such.db");
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().find("store sqlite:/proc/eacgm-no/such.db"), std::string::npos) << store.error();
}

TEST(SqliteStore, AReaderMakesNothingWhereThereIsNoStore) {
  const auto dir = std::filesystem::temp_directory_path() / ("eacgm-no-store-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "sub" / "eacgm.db").string();
  auto store = SqliteStore::open(path, StoreAccess::kRead);
  ASSERT_FALSE(store);
  EXPECT_EQ(store.error(), "cannot open store sqlite:" + path + " (no such file)");
  EXPECT_FALSE(std::filesystem::exists(dir));
  auto via_url = open_store("sqlite:" + path, StoreAccess::kRead);
  ASSERT_FALSE(via_url);
  EXPECT_FALSE(std::filesystem::exists(dir));
}

TEST(SqliteStore, ReadersAnswerWhileTheWriterHoldsItsTransaction) {
  const auto dir = std::filesystem::temp_directory_path() / ("eacgm-wal-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "eacgm.db").string();
  auto writer = SqliteStore::open(path);
  ASSERT_TRUE(writer) << writer.error();
  ASSERT_TRUE((*writer)->write("n", test::batch(test::kT0, 7, 5, 1000)));
  auto reader = SqliteStore::open(path, StoreAccess::kRead);
  ASSERT_TRUE(reader) << reader.error();
  // A second connection holds the write lock, as the writer does while it flushes.
  auto holder = SqliteDb::open(path);
  ASSERT_TRUE(holder) << holder.error();
  ASSERT_TRUE(holder->exec("BEGIN IMMEDIATE"));
  ASSERT_TRUE(holder->exec("DELETE FROM processes"));
  const auto started = std::chrono::steady_clock::now();
  auto page = (*reader)->processes(test::window(test::kT0, test::kT0 + 60 * test::kS), Tier::kRaw);
  ASSERT_TRUE(page) << page.error();
  EXPECT_EQ(page->rows.size(), 1u);  // what was committed, the writer's change unseen
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
  ASSERT_TRUE(holder->exec("ROLLBACK"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace eacgm::history
