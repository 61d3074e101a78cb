// The agent's own sections: [python] (the file filter and its rule, USDT durations, the
// profile's window and caps) and [hangs] (the ages from which a waiting call is listed
// and is a hang), each error at its line and column.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "../common/config_text.h"
#include "agent/hangs_config.h"
#include "agent/python_config.h"

namespace eacgm::agent {
namespace {

const test::SectionText<PythonConfig> python(add_python_section);

TEST(PythonConfig, PythonFileFilter) {
  Result<PythonConfig> r = python.parse({"[python]", "file_filter = \"*/myproject/*\""});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->file_filter, "*/myproject/*");
  EXPECT_EQ(PythonConfig{}.file_filter, "");
  EXPECT_THAT(python.error_of({"[python]", "file_filter = 3"}),
              HasSubstr("eacgm.toml:2:15: [python]: file_filter must be a string, not an integer"));
  EXPECT_THAT(python.error_of({"[python]", "file_filter = \"train.py\""}),
              HasSubstr("eacgm.toml:2:15: [python]: file_filter = \"train.py\" is matched "
                        "against the whole file path; start it with / or * (for example "
                        "\"*/train.py\")"));
  EXPECT_THAT(python.error_of({"[python]", "file_filer = \"*\""}),
              HasSubstr("unknown key \"file_filer\" (did you mean \"file_filter\"?)"));
}

TEST(PythonConfig, PythonUsdtDurations) {
  EXPECT_TRUE(PythonConfig{}.usdt_durations);
  Result<PythonConfig> r = python.parse({"[python]", "usdt_durations = false"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r->usdt_durations);
  EXPECT_THAT(python.error_of({"[python]", "usdt_durations = 1"}),
              HasSubstr("[python]: usdt_durations must be"));
}

TEST(PythonConfig, PythonProfileWindowAndCaps) {
  EXPECT_EQ(PythonConfig{}.window_s, 300u);
  Result<PythonConfig> r = python.parse({"[python]", "window_s = 60", "max_rows = 5000", "max_stacks = 800"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->window_s, 60u);
  EXPECT_EQ(r->max_rows, 5000u);
  EXPECT_EQ(r->max_stacks, 800u);
  EXPECT_THAT(python.error_of({"[python]", "window_s = 0"}),
              HasSubstr("eacgm.toml:2:12: [python]: window_s = 0 is out of range 10..86400"));
  EXPECT_THAT(python.error_of({"[python]", "max_rows = \"many\""}),
              HasSubstr("[python]: max_rows must be an integer, not a string"));
  EXPECT_THAT(python.error_of({"[python]", "max_stacks = 1"}),
              HasSubstr("[python]: max_stacks = 1 is out of range 10..1000000"));
}

TEST(PythonConfig, SampleRate) {
  EXPECT_EQ(PythonConfig{}.sample_hz, 99u);
  EXPECT_EQ(python.parse({"[python]", "sample_hz = 0"})->sample_hz, 0u);
  EXPECT_EQ(python.error_of({"[python]", "sample_hz = 10001"}),
            "eacgm.toml:2:13: [python]: sample_hz = 10001 is out of range 0..10000");
}

const test::SectionText<HangsConfig> hangs(add_hangs_section);

TEST(HangsConfig, HangsMinimumAge) {
  EXPECT_EQ(HangsConfig{}.min_age_s, 5.0);
  Result<HangsConfig> r = hangs.parse({"[hangs]", "min_age_s = 1"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->min_age_s, 1.0);
  EXPECT_EQ(hangs.parse({"[hangs]", "min_age_s = 0.5"})->min_age_s, 0.5);
  EXPECT_EQ(hangs.parse({"[hangs]", "min_age_s = 0"})->min_age_s, 0.0);
  EXPECT_THAT(hangs.error_of({"[hangs]", "min_age_s = -1"}),
              HasSubstr("eacgm.toml:2:13: [hangs]: min_age_s = -1 is out of range 0..86400"));
  EXPECT_THAT(hangs.error_of({"[hangs]", "min_age_s = 86401"}), HasSubstr("is out of range 0..86400"));
  EXPECT_THAT(hangs.error_of({"[hangs]", "min_age_s = nan"}), HasSubstr("[hangs]: min_age_s = nan"));
  EXPECT_THAT(hangs.error_of({"[hangs]", "min_age_s = \"5\""}),
              HasSubstr("[hangs]: min_age_s must be a number, not a string"));
  EXPECT_THAT(hangs.error_of({"[hangs]", "min_age = 5"}),
              HasSubstr("eacgm.toml:2:1: [hangs]: unknown key \"min_age\" (did you mean \"min_age_s\"?)"));
  EXPECT_THAT(hangs.error_of({"hangs = 5"}), HasSubstr("eacgm.toml:1:"));
}

TEST(HangsConfig, HangsAfterAnAge) {
  EXPECT_EQ(HangsConfig{}.hang_after_s, 600.0);
  Result<HangsConfig> r = hangs.parse({"[hangs]", "hang_after_s = 120", "min_age_s = 2"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->hang_after_s, 120.0);
  EXPECT_EQ(r->min_age_s, 2.0);
  EXPECT_EQ(hangs.parse({"[hangs]", "hang_after_s = 0"})->hang_after_s, 0.0);
  EXPECT_THAT(hangs.error_of({"[hangs]", "hang_after_s = -5"}),
              HasSubstr("eacgm.toml:2:16: [hangs]: hang_after_s = -5 is out of range 0..864000"));
  EXPECT_THAT(hangs.error_of({"[hangs]", "min_age_s = -1", "hang_after_s = 5"}),
              HasSubstr("[hangs]: min_age_s = -1 is out of range 0..86400"));
  EXPECT_TRUE(HangsConfig{}.in_flight);
  EXPECT_FALSE(hangs.parse({"[hangs]", "in_flight = false"})->in_flight);
  EXPECT_THAT(hangs.error_of({"[hangs]", "in_flight = 0"}), HasSubstr("in_flight must be true or false"));
}

}  // namespace
}  // namespace eacgm::agent
