// [store]: its values, its defaults, the retention periods' ranges and the size cap.
#include "history/store_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "../common/config_text.h"
#include "history/history_setup.h"

namespace eacgm::history {
namespace {

const test::SectionText<StoreConfig> store(add_store_section);

TEST(StoreConfig, ValuesAndDefaults) {
  const StoreConfig d;
  EXPECT_EQ(d.url, "");
  EXPECT_EQ(d.max_bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(d.spool_batches, 360u);
  Result<StoreConfig> r = store.parse({"[store]", "url = \"sqlite:/tmp/e.db\"", "node = \"n1\"",
                                       "interval_s = 5", "raw_hours = 2", "minute_days = 1", "hour_days = 30",
                                       "max_size = \"500MB\"", "spool_batches = 10"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->url, "sqlite:/tmp/e.db");
  EXPECT_EQ(r->node, "n1");
  EXPECT_EQ(r->interval_s, 5.0);
  EXPECT_EQ(r->raw_hours, 2.0);
  EXPECT_EQ(r->minute_days, 1.0);
  EXPECT_EQ(r->hour_days, 30.0);
  EXPECT_EQ(r->max_bytes, 500000000u);
  EXPECT_EQ(r->spool_batches, 10u);
  EXPECT_EQ(store.parse({"[store]", "max_size = \"0\""})->max_bytes, 0u);
  EXPECT_EQ(d.fleet_url, "");
  EXPECT_EQ(store.parse({"[store]", "fleet_url = \"postgresql://e@db/eacgm\""})->fleet_url,
            "postgresql://e@db/eacgm");
}

// A fleet store is the fleet's PostgreSQL, fed from the node's own SQLite store (the
// default file or url's); --fleet-store wins over the file.
TEST(StoreConfig, AFleetStoreIsPostgresqlFedFromTheNodesSqlite) {
  StoreConfig c;
  c.node = "n1";
  c.fleet_url = "postgresql://e@db/eacgm";
  auto s = resolve_history(c, "", "");
  ASSERT_TRUE(s) << s.error();
  ASSERT_TRUE(*s);
  EXPECT_EQ((*s)->fleet_url, "postgresql://e@db/eacgm");
  EXPECT_EQ((*s)->local_path, "/var/lib/eacgm/eacgm.db");
  s = resolve_history(c, "sqlite:/tmp/n.db", "", "postgresql://e@other/eacgm");
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ((*s)->fleet_url, "postgresql://e@other/eacgm");
  EXPECT_EQ((*s)->local_path, "/tmp/n.db");
  EXPECT_EQ(resolve_history(StoreConfig{}, "", "")->value().fleet_url, "");

  c.fleet_url = "sqlite:/tmp/f.db";
  auto bad = resolve_history(c, "", "");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "fleet store sqlite:/tmp/f.db: must be postgresql://... (the fleet's database)");
  c.fleet_url = "postgresql://e@db/eacgm";
  bad = resolve_history(c, "postgresql://e:Secret-pw@db/node", "");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error(),
              HasSubstr("a fleet store ships from the node's own SQLite store: url must be sqlite:PATH"));
  EXPECT_THAT(bad.error(), ::testing::Not(HasSubstr("Secret-pw")));
}

TEST(StoreConfig, Errors) {
  EXPECT_EQ(store.error_of({"[store]", "interval_s = 0.5"}),
            "eacgm.toml:2:14: [store]: interval_s = 0.5 is out of range 1..600");
  EXPECT_THAT(store.error_of({"[store]", "hour_days = 0"}),
              HasSubstr("hour_days = 0 is out of range 0.01..36600"));
  EXPECT_THAT(
      store.error_of({"[store]", "max_size = 5"}),
      HasSubstr("eacgm.toml:2:12: [store]: max_size must be a size such as \"1GiB\" or \"500MB\" (\"0\" "
                "for no cap): "));
  EXPECT_THAT(store.error_of({"[store]", "spool_batches = 0"}),
              HasSubstr("spool_batches = 0 is out of range"));
  EXPECT_THAT(store.error_of({"[store]", "raw_hour = 1"}), HasSubstr("(did you mean \"raw_hours\"?)"));
}

}  // namespace
}  // namespace eacgm::history
