// Store URLs: kinds, the default, and passwords that never show.
#include "history/store_url.h"

#include <gtest/gtest.h>

namespace eacgm::history {
namespace {

TEST(StoreUrl, KnowsSqliteAndPostgres) {
  auto s = parse_store_url("sqlite:/var/lib/eacgm/eacgm.db");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, StoreKind::kSqlite);
  EXPECT_EQ(s->target, "/var/lib/eacgm/eacgm.db");
  auto rel = parse_store_url("sqlite://tmp/x.db");
  ASSERT_TRUE(rel);
  EXPECT_EQ(rel->target, "tmp/x.db");
  auto pg = parse_store_url("postgresql://eacgm:secret@db:5432/eacgm");
  ASSERT_TRUE(pg);
  EXPECT_EQ(pg->kind, StoreKind::kPostgres);
  auto kv = parse_store_url("host=/tmp dbname=eacgm password=x");
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->kind, StoreKind::kPostgres);
  EXPECT_TRUE(parse_store_url(std::string(kDefaultStoreUrl)));
}

TEST(StoreUrl, UnknownUrlsAreUsageErrorsWithoutTheirPassword) {
  auto bad = parse_store_url("mysql://root:hunter2@db/eacgm");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error_kind(), ErrorKind::kUsage);
  EXPECT_EQ(bad.error().find("hunter2"), std::string::npos) << bad.error();
  EXPECT_FALSE(parse_store_url("sqlite:"));
}

TEST(StoreUrl, RedactsPasswords) {
  EXPECT_EQ(redact_store_url("postgresql://eacgm:s3cr%40t@db:5432/eacgm?sslmode=require"),
            "postgresql://eacgm:***@db:5432/eacgm?sslmode=require");
  EXPECT_EQ(redact_store_url("postgresql://db/eacgm?user=u&password=p&sslmode=disable"),
            "postgresql://db/eacgm?user=u&password=***&sslmode=disable");
  EXPECT_EQ(redact_store_url("host=db password='a b' dbname=x"), "host=db password=*** dbname=x");
  EXPECT_EQ(redact_store_url("postgresql://eacgm@db/eacgm"), "postgresql://eacgm@db/eacgm");
  EXPECT_EQ(redact_store_url("sqlite:/tmp/x.db"), "sqlite:/tmp/x.db");
}

}  // namespace
}  // namespace eacgm::history
