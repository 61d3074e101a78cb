// [serve]: its values, its defaults, and its ranges.
#include "server/serve_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "../common/config_text.h"

namespace eacgm::server {
namespace {

const test::SectionText<ServeConfig> serve(add_serve_section);

TEST(ServeConfig, ValuesAndDefaults) {
  Result<ServeConfig> r =
      serve.parse({"[serve]", "listen = \"0.0.0.0:9000\"", "token_file = \"/etc/eacgm/token\"",
                   "max_clients = 16", "dcgm_metrics = false", "max_function_series = 100",
                   "max_process_series = 50", "max_histogram_series = 0", "rescan_interval_s = 30"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->listen, "0.0.0.0:9000");
  EXPECT_EQ(r->token_file, "/etc/eacgm/token");
  EXPECT_EQ(r->max_clients, 16u);
  EXPECT_FALSE(r->dcgm_metrics);
  EXPECT_EQ(r->max_function_series, 100u);
  EXPECT_EQ(r->max_process_series, 50u);
  EXPECT_EQ(r->max_histogram_series, 0u);
  EXPECT_EQ(r->rescan_interval_s, 30.0);
  EXPECT_EQ(r->advertise_url, "");
  r = serve.parse({"[serve]", "advertise_url = \"http://node-7.example:9977\""});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->advertise_url, "http://node-7.example:9977");
  const ServeConfig d;
  EXPECT_EQ(d.listen, "127.0.0.1:9977");
  EXPECT_EQ(d.max_clients, 8u);
  EXPECT_EQ(d.rescan_interval_s, 10.0);
}

TEST(ServeConfig, Errors) {
  EXPECT_EQ(serve.error_of({"[serve]", "max_clients = 0"}),
            "eacgm.toml:2:15: [serve]: max_clients = 0 is out of range 1..256");
  EXPECT_EQ(serve.error_of({"[serve]", "rescan_interval_s = 0.01"}),
            "eacgm.toml:2:21: [serve]: rescan_interval_s = 0.01 is out of range 0.1..3600");
  EXPECT_THAT(serve.error_of({"[serve]", "listen = 9977"}),
              HasSubstr("eacgm.toml:2:10: [serve]: listen must be a string, not an integer"));
  EXPECT_THAT(serve.error_of({"[serve]", "max_clint = 2"}), HasSubstr("(did you mean \"max_clients\"?)"));
  EXPECT_THAT(serve.error_of({"[serve]", "advertise_url = \"node-7:9977\""}),
              HasSubstr("[serve]: \"node-7:9977\" is no URL of the agent's API: give http://HOST:PORT"));
}

}  // namespace
}  // namespace eacgm::server
