// [trace]: its values, defaults and ranges, and one failing case per rule, each error
// checked for its line and column and its key phrase.
#include "ingest/trace_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../common/config_text.h"

namespace eacgm::ingest {
namespace {

const test::SectionText<TraceConfig> trace(add_trace_section);

TEST(TraceConfig, SessionSettings) {
  Result<TraceConfig> r =
      trace.parse({"[trace]", "ringbuf_mib = 64", "wakeup_kib = 512", "poll_timeout_ms = 250",
                   "rescan_interval_s = 0.5", "status_interval_s = 0"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->ringbuf_mib, 64u);
  EXPECT_EQ(r->wakeup_kib, 512u);
  EXPECT_EQ(r->poll_timeout_ms, 250u);
  EXPECT_DOUBLE_EQ(r->rescan_interval_s, 0.5);
  EXPECT_DOUBLE_EQ(r->status_interval_s, 0.0);
}

TEST(TraceConfig, Mode) {
  EXPECT_FALSE(TraceConfig{}.mode.has_value()) << "unset: the command's default";
  EXPECT_EQ(trace.parse({"[trace]", "mode = \"always-on\""})->mode, std::optional(TraceMode::kAlwaysOn));
  EXPECT_EQ(trace.parse({"[trace]", "mode = \"per-call\""})->mode, std::optional(TraceMode::kPerCall));
  EXPECT_EQ(trace.error_of({"[trace]", "mode = \"fast\""}),
            "eacgm.toml:2:8: [trace]: mode must be \"per-call\" or \"always-on\" (docs/overhead.md)");
  EXPECT_THAT(trace.error_of({"[trace]", "mode = 1"}), HasSubstr("eacgm.toml:2:8: [trace]: mode must be"));
}

TEST(TraceConfig, BudgetAndSampling) {
  Result<TraceConfig> r = trace.parse({"[trace]", "sample_shift = 6", "budget = 0", "calibrate = false"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->sample_shift, 6u);
  EXPECT_EQ(r->budget, 0.0);
  EXPECT_FALSE(r->calibrate);
  EXPECT_EQ(trace.error_of({"[trace]", "budget = 2"}),
            "eacgm.toml:2:10: [trace]: budget = 2 is out of range 0..1");
  EXPECT_EQ(trace.error_of({"[trace]", "sample_shift = 21"}),
            "eacgm.toml:2:16: [trace]: sample_shift = 21 is out of range 0..20");
}

TEST(TraceConfig, HostWaitsCanBeTurnedOff) {
  Result<TraceConfig> r = trace.parse({"[trace]", "host_waits = false"});
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->host_waits, std::optional<bool>(false));
  EXPECT_EQ(trace.parse({"[trace]", "host_waits = true"})->host_waits, std::optional<bool>(true));
  EXPECT_FALSE(TraceConfig{}.host_waits.has_value()) << "unset: the command's default";
  EXPECT_THAT(trace.error_of({"[trace]", "host_waits = 1"}), HasSubstr("eacgm.toml:2"));
}

TEST(TraceConfig, UnknownKeysAreErrorsWithSuggestion) {
  std::string e = trace.error_of({"[trace]", "ringbuf_mb = 16"});
  EXPECT_THAT(e, StartsWith("eacgm.toml:2:1: [trace]: unknown key \"ringbuf_mb\""));
  EXPECT_THAT(e, HasSubstr("did you mean \"ringbuf_mib\"?"));
}

TEST(TraceConfig, WrongTypes) {
  EXPECT_THAT(trace.error_of({"[trace]", "ringbuf_mib = 16.0"}),
              HasSubstr("eacgm.toml:2:15: [trace]: ringbuf_mib must be an integer, not a "
                        "float"));
  EXPECT_THAT(trace.error_of({"trace = 3"}), HasSubstr("eacgm.toml:1:9: trace must be a table"));
}

TEST(TraceConfig, PinnedProbes) {
  Result<TraceConfig> r = trace.parse({"[trace]", "pinned = [\"cuLaunchKernel\", \"my_alloc\"]"});
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->pinned, (std::vector<std::string>{"cuLaunchKernel", "my_alloc"}));
  EXPECT_TRUE(TraceConfig{}.pinned.empty());
  EXPECT_THAT(trace.error_of({"[trace]", "pinned = \"cuLaunchKernel\""}),
              HasSubstr("[trace]: pinned must be an array of probe names"));
  EXPECT_THAT(trace.error_of({"[trace]", "pinned = [\"\"]"}), HasSubstr("pinned entries must be non-empty"));
  EXPECT_THAT(trace.error_of({"[trace]", "pinned = [\"a\", \"a\"]"}),
              HasSubstr("probe \"a\" is pinned twice"));
}

TEST(TraceConfig, DutyCycleIsOnUnlessTurnedOff) {
  EXPECT_TRUE(TraceConfig{}.duty_cycle);
  Result<TraceConfig> r = trace.parse({"[trace]", "duty_cycle = false"});
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->duty_cycle);
  EXPECT_THAT(trace.error_of({"[trace]", "duty_cycle = 1"}), HasSubstr("duty_cycle"));
}

TEST(TraceConfig, DutyMeasuringSettings) {
  const TraceConfig defaults;
  EXPECT_FALSE(defaults.duty_fraction.has_value()) << "unset: the budget sets the fraction";
  EXPECT_TRUE(defaults.duty_switch_log.empty());
  EXPECT_TRUE(defaults.duty_log.empty());
  Result<TraceConfig> r = trace.parse(
      {"[trace]", "duty_fraction = 0.4", "duty_switch_log = \"/tmp/s.log\"", "duty_log = \"/tmp/d.log\""});
  ASSERT_TRUE(r) << r.error();
  ASSERT_TRUE(r->duty_fraction.has_value());
  EXPECT_DOUBLE_EQ(*r->duty_fraction, 0.4);
  EXPECT_EQ(r->duty_switch_log, "/tmp/s.log");
  EXPECT_EQ(r->duty_log, "/tmp/d.log");
  // The whole time is a fraction too, and may be written as an integer.
  r = trace.parse({"[trace]", "duty_fraction = 1"});
  ASSERT_TRUE(r) << r.error();
  EXPECT_DOUBLE_EQ(*r->duty_fraction, 1.0);

  for (const char* bad :
       {"duty_fraction = 0", "duty_fraction = 1.5", "duty_fraction = -0.2", "duty_fraction = nan"}) {
    EXPECT_THAT(trace.error_of({"[trace]", bad}), HasSubstr("eacgm.toml:2:17: [trace]: duty_fraction = "))
        << bad;
    EXPECT_THAT(trace.error_of({"[trace]", bad}),
                HasSubstr("is out of range: use a fraction in (0, 1], such as 0.5"))
        << bad;
  }
  EXPECT_THAT(trace.error_of({"[trace]", "duty_fraction = \"half\""}),
              HasSubstr("eacgm.toml:2:17: [trace]: duty_fraction must be a number, not a string"));
  EXPECT_THAT(trace.error_of({"[trace]", "duty_switch_log = true"}),
              HasSubstr("eacgm.toml:2:19: [trace]: duty_switch_log must be a string, not a boolean"));
  EXPECT_THAT(trace.error_of({"[trace]", "duty_log = 3"}),
              HasSubstr("eacgm.toml:2:12: [trace]: duty_log must be a string, not an integer"));
  EXPECT_THAT(trace.error_of({"[trace]", "duty_fractoin = 0.5"}),
              HasSubstr("eacgm.toml:2:1: [trace]: unknown key \"duty_fractoin\" (did you mean "
                        "\"duty_fraction\"?)"));
  EXPECT_THAT(trace.error_of({"[trace]", "duty_swich_log = \"x\""}),
              HasSubstr("did you mean \"duty_switch_log\"?"));
  EXPECT_THAT(trace.error_of({"[trace]", "duty_logs = \"x\""}), HasSubstr("did you mean \"duty_log\"?"));
}

TEST(TraceConfig, PerCallTracesBothLayersUnlessAskedForOne) {
  EXPECT_FALSE(TraceConfig{}.one_layer);
  Result<TraceConfig> r = trace.parse({"[trace]", "one_layer = true"});
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(r->one_layer);
  EXPECT_THAT(trace.error_of({"[trace]", "one_layer = \"yes\""}), HasSubstr("one_layer"));
}

TEST(TraceConfig, TraceRanges) {
  EXPECT_THAT(trace.error_of({"[trace]", "ringbuf_mib = 24"}),
              HasSubstr("eacgm.toml:2:15: [trace]: ringbuf_mib = 24 is not a power of two"));
  EXPECT_THAT(trace.error_of({"[trace]", "ringbuf_mib = 2048"}),
              HasSubstr("eacgm.toml:2:15: [trace]: ringbuf_mib = 2048 is out of range 1..1024"));
  EXPECT_THAT(trace.error_of({"[trace]", "ringbuf_mib = 0"}),
              HasSubstr("eacgm.toml:2:15: [trace]: ringbuf_mib = 0 is out of range"));
  EXPECT_THAT(trace.error_of({"[trace]", "ringbuf_mib = 1", "wakeup_kib = 513"}),
              HasSubstr("eacgm.toml:3:14: [trace]: wakeup_kib = 513 exceeds half the ring "
                        "buffer (ringbuf_mib = 1 allows at most 512)"));
  EXPECT_TRUE(trace.parse({"[trace]", "ringbuf_mib = 1", "wakeup_kib = 512"}).ok());
  EXPECT_TRUE(trace.parse({"[trace]", "wakeup_kib = 0"}).ok());
  EXPECT_THAT(trace.error_of({"[trace]", "wakeup_kib = -1"}),
              HasSubstr("eacgm.toml:2:14: [trace]: wakeup_kib = -1 is out of range"));
  EXPECT_THAT(trace.error_of({"[trace]", "poll_timeout_ms = 0"}),
              HasSubstr("eacgm.toml:2:19: [trace]: poll_timeout_ms = 0 is out of range "
                        "1..10000"));
  EXPECT_THAT(trace.error_of({"[trace]", "poll_timeout_ms = 10001"}),
              HasSubstr("eacgm.toml:2:19: [trace]: poll_timeout_ms = 10001 is out of range"));
  EXPECT_THAT(trace.error_of({"[trace]", "rescan_interval_s = 0.01"}),
              HasSubstr("eacgm.toml:2:21: [trace]: rescan_interval_s = 0.01 is out of range "
                        "0.05..3600"));
  EXPECT_THAT(trace.error_of({"[trace]", "rescan_interval_s = nan"}),
              HasSubstr("eacgm.toml:2:21: [trace]: rescan_interval_s = nan is out of range"));
  EXPECT_THAT(trace.error_of({"[trace]", "status_interval_s = 0.05"}),
              HasSubstr("eacgm.toml:2:21: [trace]: status_interval_s = 0.05 is out of range: "
                        "use 0 (off) or 0.1..3600"));
  EXPECT_THAT(trace.error_of({"[trace]", "status_interval_s = 3601"}),
              HasSubstr("eacgm.toml:2:21: [trace]: status_interval_s = 3601 is out of range"));
}

}  // namespace
}  // namespace eacgm::ingest
