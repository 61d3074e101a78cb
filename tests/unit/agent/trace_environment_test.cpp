// The environment's overrides of the duty cycle's [trace] settings, and the logs they
// name: a value set replaces the config's, a bad fraction is an error, an unwritable log
// says which settings name it.
#include "agent/trace_environment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace eacgm::agent {
namespace {

using ::testing::HasSubstr;

// Sets (or, with nullptr, unsets) an environment variable for one test, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(TraceEnvironment, UnsetLeavesTheConfigAsItIs) {
  ScopedEnv fraction("EACGM_DUTY_FRACTION", nullptr);
  ScopedEnv switches("EACGM_DUTY_SWITCHES", nullptr);
  ScopedEnv log("EACGM_DUTY_LOG", nullptr);
  ingest::TraceConfig trace;
  trace.duty_fraction = 0.3;
  trace.duty_switch_log = "/from/config/switches";
  trace.duty_log = "/from/config/duty";
  ASSERT_TRUE(apply_environment_overrides(trace));
  EXPECT_EQ(trace.duty_fraction, 0.3);
  EXPECT_EQ(trace.duty_switch_log, "/from/config/switches");
  EXPECT_EQ(trace.duty_log, "/from/config/duty");
}

TEST(TraceEnvironment, SetOverridesTheConfig) {
  ScopedEnv fraction("EACGM_DUTY_FRACTION", "0.25");
  ScopedEnv switches("EACGM_DUTY_SWITCHES", "/from/env/switches");
  ScopedEnv log("EACGM_DUTY_LOG", "");  // set empty: no log
  ingest::TraceConfig trace;
  trace.duty_fraction = 0.3;
  trace.duty_log = "/from/config/duty";
  ASSERT_TRUE(apply_environment_overrides(trace));
  EXPECT_EQ(trace.duty_fraction, 0.25);
  EXPECT_EQ(trace.duty_switch_log, "/from/env/switches");
  EXPECT_EQ(trace.duty_log, "");
}

TEST(TraceEnvironment, ABadFractionIsAnError) {
  for (const char* bad : {"0", "1.5", "-0.2", "half", "0.5x", ""}) {
    ScopedEnv fraction("EACGM_DUTY_FRACTION", bad);
    ingest::TraceConfig trace;
    const Status st = apply_environment_overrides(trace);
    ASSERT_FALSE(st) << bad;
    EXPECT_EQ(st.error(),
              "EACGM_DUTY_FRACTION=\"" + std::string(bad) + "\": expected a fraction in (0, 1], such as 0.5");
    EXPECT_EQ(st.error_kind(), ErrorKind::kUsage);
    EXPECT_FALSE(trace.duty_fraction.has_value());
  }
}

TEST(TraceEnvironment, ALogIsOpenedOnlyWhereNamed) {
  auto none = open_log("", "[trace] duty_log or EACGM_DUTY_LOG");
  ASSERT_TRUE(none) << none.error();
  EXPECT_EQ(*none, nullptr);
  auto file = open_log(::testing::TempDir() + "trace_environment.log", "[trace] duty_log or EACGM_DUTY_LOG");
  ASSERT_TRUE(file) << file.error();
  EXPECT_NE(*file, nullptr);
  auto bad = open_log("/nonexistent-dir/duty.log", "[trace] duty_log or EACGM_DUTY_LOG");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error(), HasSubstr("[trace] duty_log or EACGM_DUTY_LOG = \"/nonexistent-dir/duty.log\": "
                                     "cannot write it: "));
  EXPECT_EQ(bad.error_kind(), ErrorKind::kUsage);
}

}  // namespace
}  // namespace eacgm::agent
