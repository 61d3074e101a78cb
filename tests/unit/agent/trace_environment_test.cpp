// The environment's overrides of the duty cycle's [trace] settings, and the logs they
// name: a value set replaces the config's, a bad fraction is an error, an unwritable log
// says which settings name it.
#include "agent/trace_environment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace eacgm::agent {
namespace {

using ::testing::HasSubstr;

// An environment of its own: `vars`, and nothing else set.
DutyOverrides overrides_of(const std::map<std::string, std::string>& vars) {
  return duty_overrides([&vars](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
}

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
  ingest::TraceConfig trace;
  trace.duty_fraction = 0.3;
  trace.duty_switch_log = "/from/config/switches";
  trace.duty_log = "/from/config/duty";
  ASSERT_TRUE(apply_duty_overrides(overrides_of({}), trace));
  EXPECT_EQ(trace.duty_fraction, 0.3);
  EXPECT_EQ(trace.duty_switch_log, "/from/config/switches");
  EXPECT_EQ(trace.duty_log, "/from/config/duty");
}

TEST(TraceEnvironment, SetOverridesTheConfig) {
  const DutyOverrides env = overrides_of({{"EACGM_DUTY_FRACTION", "0.25"},
                                          {"EACGM_DUTY_SWITCHES", "/from/env/switches"},
                                          {"EACGM_DUTY_LOG", ""}});  // set empty: no log
  ingest::TraceConfig trace;
  trace.duty_fraction = 0.3;
  trace.duty_log = "/from/config/duty";
  ASSERT_TRUE(apply_duty_overrides(env, trace));
  EXPECT_EQ(trace.duty_fraction, 0.25);
  EXPECT_EQ(trace.duty_switch_log, "/from/env/switches");
  EXPECT_EQ(trace.duty_log, "");
}

TEST(TraceEnvironment, ReadsTheProcessEnvironmentThroughGetenv) {
  ScopedEnv fraction("EACGM_DUTY_FRACTION", "0.5");
  ScopedEnv switches("EACGM_DUTY_SWITCHES", nullptr);
  ScopedEnv log("EACGM_DUTY_LOG", "/from/env/duty");
  const DutyOverrides env = duty_overrides(std::getenv);
  EXPECT_EQ(env.fraction, std::optional<std::string>("0.5"));
  EXPECT_EQ(env.switch_log, std::nullopt);
  EXPECT_EQ(env.log, std::optional<std::string>("/from/env/duty"));
}

TEST(TraceEnvironment, ABadFractionIsAnError) {
  for (const char* bad : {"0", "1.5", "-0.2", "half", "0.5x", ""}) {
    ingest::TraceConfig trace;
    const Status st = apply_duty_overrides(overrides_of({{"EACGM_DUTY_FRACTION", bad}}), trace);
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
