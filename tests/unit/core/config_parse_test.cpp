// The config file reader: a full file's exact values, defaults, and one failing case
// per rule, each error checked for its line number and its key phrase.
#include "core/config_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <string>

namespace eacgm {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Line i (1-based) of the result is lines[i-1], so tests can name line numbers.
std::string lines(std::initializer_list<const char*> ls) {
  std::string out;
  for (const char* l : ls) {
    out += l;
    out += '\n';
  }
  return out;
}

std::string error_of(const std::string& text) {
  Result<Config> r = parse_config(text, "eacgm.toml");
  return r.ok() ? std::string("<accepted>") : r.error();
}

// A probe whose only interesting part is its args line (line 5).
std::string probe_with_args(const char* args, const char* extra = "") {
  return lines({"[[probe]]", "name = \"p\"", "library = \"libfoo.so*\"", "symbol = \"foo\"", args, extra});
}

TEST(ConfigParse, EmptyFileGivesDefaults) {
  for (const char* text : {"", "# only a comment\n\n"}) {
    Result<Config> r = parse_config(text, "eacgm.toml");
    ASSERT_TRUE(r.ok()) << r.error();
    const Config defaults;
    EXPECT_EQ(r->trace.ringbuf_mib, defaults.trace.ringbuf_mib);
    EXPECT_EQ(r->trace.wakeup_kib, defaults.trace.wakeup_kib);
    EXPECT_EQ(r->trace.poll_timeout_ms, defaults.trace.poll_timeout_ms);
    EXPECT_EQ(r->trace.rescan_interval_s, defaults.trace.rescan_interval_s);
    EXPECT_EQ(r->trace.status_interval_s, defaults.trace.status_interval_s);
    EXPECT_EQ(r->gpu.interval_s, defaults.gpu.interval_s);
    EXPECT_TRUE(r->gpu.sample);
    EXPECT_FALSE(r->trace.host_waits.has_value()) << "unset: the command's default";
    EXPECT_TRUE(r->catalogs.empty());
    EXPECT_TRUE(r->probes.empty());
  }
}

TEST(ConfigParse, FullFileRoundTrips) {
  const std::string text = lines({
      "catalogs = [\"cuda\", \"nccl\"]",
      "[trace]",
      "ringbuf_mib = 64",
      "wakeup_kib = 512",
      "poll_timeout_ms = 250",
      "rescan_interval_s = 0.5",
      "status_interval_s = 0",
      "[gpu]",
      "interval_s = 2",
      "sample = false",
      "[[probe]]",
      "name = \"my_alloc\"",
      "library = \"libfoo.so*\"",
      "symbol = \"foo_alloc\"",
      "args = [",
      "  { name = \"size\", reg = 1, kind = \"raw\" },",
      "  { name = \"ptr\", reg = 0, kind = \"deref_u64\", at_exit = true, format = \"hex\" },",
      "  { name = \"n\", stack = 0, kind = \"u32\", format = \"signed\" },",
      "  { name = \"grid\", reg = 4, kind = \"dim3\" },",
      "  { name = \"path\", stack = 3, kind = \"string\" },",
      "]",
      "[[probe]]",
      "name = \"ns::op.v2-x\"",
      "domain = \"torch\"",
      "library = \"libtorch_python.so\"",
      "pattern = \"_ZN5torch*\"",
      "exit = false",
      "[[probe]]",
      "name = \"get_ptr\"",
      "library = \"libbar.so\"",
      "symbol = \"bar_get\"",
      "ret = \"pointer\"",
      "[[probe.args]]",
      "name = \"dims\"",
      "reg = 5",
      "kind = \"deref_dim3\"",
  });
  Result<Config> r = parse_config(text, "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  const Config& c = *r;
  EXPECT_EQ(c.catalogs, (std::vector<std::string>{"cuda", "nccl"}));
  EXPECT_EQ(c.trace.ringbuf_mib, 64u);
  EXPECT_EQ(c.trace.wakeup_kib, 512u);
  EXPECT_EQ(c.trace.poll_timeout_ms, 250u);
  EXPECT_DOUBLE_EQ(c.trace.rescan_interval_s, 0.5);
  EXPECT_DOUBLE_EQ(c.trace.status_interval_s, 0.0);
  EXPECT_DOUBLE_EQ(c.gpu.interval_s, 2.0);
  EXPECT_FALSE(c.gpu.sample);
  ASSERT_EQ(c.probes.size(), 3u);

  const ProbeSpec& a = c.probes[0];
  EXPECT_EQ(a.name, "my_alloc");
  EXPECT_EQ(a.domain, "user");
  EXPECT_EQ(a.library, "libfoo.so*");
  EXPECT_EQ(a.symbol, "foo_alloc");
  EXPECT_FALSE(a.symbol_is_pattern);
  EXPECT_TRUE(a.with_exit);
  EXPECT_EQ(a.ret, ReturnKind::kInt32);
  ASSERT_EQ(a.args.size(), 5u);
  EXPECT_EQ(a.args[0].name, "size");
  EXPECT_EQ(a.args[0].source, ArgSource::kRegister);
  EXPECT_EQ(a.args[0].index, 1);
  EXPECT_EQ(a.args[0].kind, ArgKind::kRaw);
  EXPECT_EQ(a.args[0].format, ArgFormat::kUnsigned);
  EXPECT_FALSE(a.args[0].at_exit);
  EXPECT_EQ(a.args[1].name, "ptr");
  EXPECT_EQ(a.args[1].source, ArgSource::kRegister);
  EXPECT_EQ(a.args[1].index, 0);
  EXPECT_EQ(a.args[1].kind, ArgKind::kDerefU64);
  EXPECT_EQ(a.args[1].format, ArgFormat::kHex);
  EXPECT_TRUE(a.args[1].at_exit);
  EXPECT_EQ(a.args[2].name, "n");
  EXPECT_EQ(a.args[2].source, ArgSource::kStack);
  EXPECT_EQ(a.args[2].index, 0);
  EXPECT_EQ(a.args[2].kind, ArgKind::kU32);
  EXPECT_EQ(a.args[2].format, ArgFormat::kSigned);
  EXPECT_EQ(a.args[3].kind, ArgKind::kDim3);
  EXPECT_EQ(a.args[3].index, 4);
  EXPECT_EQ(a.args[4].kind, ArgKind::kString);
  EXPECT_EQ(a.args[4].source, ArgSource::kStack);
  EXPECT_EQ(a.args[4].index, 3);

  const ProbeSpec& b = c.probes[1];
  EXPECT_EQ(b.name, "ns::op.v2-x");
  EXPECT_EQ(b.domain, "torch");
  EXPECT_EQ(b.library, "libtorch_python.so");
  EXPECT_EQ(b.symbol, "_ZN5torch*");
  EXPECT_TRUE(b.symbol_is_pattern);
  EXPECT_FALSE(b.with_exit);
  EXPECT_EQ(b.ret, ReturnKind::kNone);  // default when exit = false
  EXPECT_TRUE(b.args.empty());

  const ProbeSpec& d = c.probes[2];
  EXPECT_EQ(d.ret, ReturnKind::kPointer);
  ASSERT_EQ(d.args.size(), 1u);  // [[probe.args]] works as well as inline tables
  EXPECT_EQ(d.args[0].name, "dims");
  EXPECT_EQ(d.args[0].index, 5);
  EXPECT_EQ(d.args[0].kind, ArgKind::kDerefDim3);
}

TEST(ConfigParse, TomlSyntaxErrorKeepsLine) {
  std::string e = error_of(lines({"[trace]", "ringbuf_mib = 16", "wakeup_kib = = 3"}));
  EXPECT_THAT(e, StartsWith("eacgm.toml:3:"));
  EXPECT_THAT(e, HasSubstr("TOML syntax error"));
  // toml++'s own duplicate-key error is a syntax error too.
  EXPECT_THAT(error_of(lines({"[gpu]", "interval_s = 1", "interval_s = 2"})), StartsWith("eacgm.toml:3:"));
}

TEST(ConfigParse, HostWaitsCanBeTurnedOff) {
  Result<Config> r = parse_config(lines({"[trace]", "host_waits = false"}), "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->trace.host_waits, std::optional<bool>(false));
  EXPECT_EQ(parse_config(lines({"[trace]", "host_waits = true"}), "eacgm.toml")->trace.host_waits,
            std::optional<bool>(true));
  EXPECT_THAT(error_of(lines({"[trace]", "host_waits = 1"})), HasSubstr("eacgm.toml:2"));
}

TEST(ConfigParse, PythonFileFilter) {
  Result<Config> r = parse_config(lines({"[python]", "file_filter = \"*/myproject/*\""}), "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->python.file_filter, "*/myproject/*");
  EXPECT_EQ(Config{}.python.file_filter, "");
  EXPECT_THAT(error_of(lines({"[python]", "file_filter = 3"})),
              HasSubstr("eacgm.toml:2:15: [python]: file_filter must be a string, not an integer"));
  EXPECT_THAT(error_of(lines({"[python]", "file_filter = \"train.py\""})),
              HasSubstr("eacgm.toml:2:15: [python]: file_filter = \"train.py\" is matched "
                        "against the whole file path; start it with / or * (for example "
                        "\"*/train.py\")"));
  EXPECT_THAT(error_of(lines({"[python]", "file_filer = \"*\""})),
              HasSubstr("unknown key \"file_filer\" (did you mean \"file_filter\"?)"));
}

TEST(ConfigParse, PythonUsdtDurations) {
  EXPECT_TRUE(Config{}.python.usdt_durations);
  Result<Config> r = parse_config(lines({"[python]", "usdt_durations = false"}), "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r->python.usdt_durations);
  EXPECT_THAT(error_of(lines({"[python]", "usdt_durations = 1"})),
              HasSubstr("[python]: usdt_durations must be"));
}

TEST(ConfigParse, PythonProfileWindowAndCaps) {
  EXPECT_EQ(Config{}.python.window_s, 300u);
  Result<Config> r =
      parse_config(lines({"[python]", "window_s = 60", "max_rows = 5000", "max_stacks = 800"}), "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->python.window_s, 60u);
  EXPECT_EQ(r->python.max_rows, 5000u);
  EXPECT_EQ(r->python.max_stacks, 800u);
  EXPECT_THAT(error_of(lines({"[python]", "window_s = 0"})),
              HasSubstr("eacgm.toml:2:12: [python]: window_s = 0 is out of range 10..86400"));
  EXPECT_THAT(error_of(lines({"[python]", "max_rows = \"many\""})),
              HasSubstr("[python]: max_rows must be an integer, not a string"));
  EXPECT_THAT(error_of(lines({"[python]", "max_stacks = 1"})),
              HasSubstr("[python]: max_stacks = 1 is out of range 10..1000000"));
}

TEST(ConfigParse, Kubernetes) {
  const KubernetesConfig d = Config{}.kubernetes;
  EXPECT_TRUE(d.enabled);
  EXPECT_EQ(d.pod_resources_socket, "/var/lib/kubelet/pod-resources/kubelet.sock");
  EXPECT_EQ(d.process_series, "auto");
  Result<Config> r =
      parse_config(lines({"[kubernetes]", "enabled = false", "pod_resources_socket = \"/run/k.sock\"",
                          "log_root = \"/host/var/log\"", "refresh_s = 5", "process_series = \"pid\""}),
                   "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r->kubernetes.enabled);
  EXPECT_EQ(r->kubernetes.pod_resources_socket, "/run/k.sock");
  EXPECT_EQ(r->kubernetes.log_root, "/host/var/log");
  EXPECT_EQ(r->kubernetes.refresh_s, 5.0);
  EXPECT_EQ(r->kubernetes.process_series, "pid");
  EXPECT_THAT(
      error_of(lines({"[kubernetes]", "process_series = \"pod\""})),
      HasSubstr("eacgm.toml:2:18: [kubernetes]: process_series must be \"auto\" or \"pid\", not \"pod\""));
  EXPECT_THAT(error_of(lines({"[kubernetes]", "log_root = \"var/log\""})),
              HasSubstr("[kubernetes]: log_root must be an absolute path"));
  EXPECT_THAT(error_of(lines({"[kubernetes]", "refresh_s = 0"})), HasSubstr("is out of range 1..86400"));
  EXPECT_THAT(error_of(lines({"[kubernetes]", "socket = \"/x\""})),
              HasSubstr("[kubernetes]: unknown key \"socket\""));
}

TEST(ConfigParse, HangsMinimumAge) {
  EXPECT_EQ(Config{}.hangs.min_age_s, 5.0);
  Result<Config> r = parse_config(lines({"[hangs]", "min_age_s = 1"}), "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->hangs.min_age_s, 1.0);
  EXPECT_EQ(parse_config(lines({"[hangs]", "min_age_s = 0.5"}), "eacgm.toml")->hangs.min_age_s, 0.5);
  EXPECT_EQ(parse_config(lines({"[hangs]", "min_age_s = 0"}), "eacgm.toml")->hangs.min_age_s, 0.0);
  EXPECT_THAT(error_of(lines({"[hangs]", "min_age_s = -1"})),
              HasSubstr("eacgm.toml:2:13: [hangs]: min_age_s = -1 is out of range 0..86400"));
  EXPECT_THAT(error_of(lines({"[hangs]", "min_age_s = 86401"})), HasSubstr("is out of range 0..86400"));
  EXPECT_THAT(error_of(lines({"[hangs]", "min_age_s = nan"})), HasSubstr("[hangs]: min_age_s = nan"));
  EXPECT_THAT(error_of(lines({"[hangs]", "min_age_s = \"5\""})),
              HasSubstr("[hangs]: min_age_s must be a number, not a string"));
  EXPECT_THAT(error_of(lines({"[hangs]", "min_age = 5"})),
              HasSubstr("eacgm.toml:2:1: [hangs]: unknown key \"min_age\" (did you mean \"min_age_s\"?)"));
  EXPECT_THAT(error_of(lines({"hangs = 5"})), HasSubstr("eacgm.toml:1:"));
}

TEST(ConfigParse, HangsAfterAnAge) {
  EXPECT_EQ(Config{}.hangs.hang_after_s, 600.0);
  Result<Config> r = parse_config(lines({"[hangs]", "hang_after_s = 120", "min_age_s = 2"}), "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->hangs.hang_after_s, 120.0);
  EXPECT_EQ(r->hangs.min_age_s, 2.0);
  EXPECT_EQ(parse_config(lines({"[hangs]", "hang_after_s = 0"}), "eacgm.toml")->hangs.hang_after_s, 0.0);
  EXPECT_THAT(error_of(lines({"[hangs]", "hang_after_s = -5"})),
              HasSubstr("eacgm.toml:2:16: [hangs]: hang_after_s = -5 is out of range 0..864000"));
  EXPECT_THAT(error_of(lines({"[hangs]", "min_age_s = -1", "hang_after_s = 5"})),
              HasSubstr("[hangs]: min_age_s = -1 is out of range 0..86400"));
  EXPECT_TRUE(Config{}.hangs.in_flight);
  EXPECT_FALSE(parse_config(lines({"[hangs]", "in_flight = false"}), "eacgm.toml")->hangs.in_flight);
  EXPECT_THAT(error_of(lines({"[hangs]", "in_flight = 0"})), HasSubstr("in_flight must be true or false"));
}

TEST(ConfigParse, ProbeWaits) {
  Result<Config> r = parse_config(probe_with_args("waits = true"), "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->probes.at(0).waits);
  EXPECT_FALSE(parse_config(probe_with_args(""), "eacgm.toml")->probes.at(0).waits);
  EXPECT_THAT(error_of(probe_with_args("waits = 1")),
              HasSubstr("eacgm.toml:5:9: probe \"p\": waits must be true or false, not an integer"));
  EXPECT_THAT(error_of(probe_with_args("waits = true", "exit = false")),
              HasSubstr("eacgm.toml:5:9: probe \"p\": waits = true needs exit = true (the return ends the "
                        "wait)"));
}

TEST(ConfigParse, UnknownKeysAreErrorsWithSuggestion) {
  std::string e = error_of(lines({"[trace]", "ringbuf_mb = 16"}));
  EXPECT_THAT(e, StartsWith("eacgm.toml:2:1: [trace]: unknown key \"ringbuf_mb\""));
  EXPECT_THAT(e, HasSubstr("did you mean \"ringbuf_mib\"?"));

  e = error_of(lines({"", "catalog = [\"cuda\"]"}));
  EXPECT_THAT(e, StartsWith("eacgm.toml:2:1: unknown key \"catalog\""));
  EXPECT_THAT(e, HasSubstr("did you mean \"catalogs\"?"));

  // Nothing close: list what is allowed instead of guessing.
  e = error_of(lines({"[gpu]", "completely_different = 1"}));
  EXPECT_THAT(e, HasSubstr("eacgm.toml:2:1: [gpu]: unknown key \"completely_different\" "
                           "(expected one of interval_s, sample)"));

  e = error_of(probe_with_args("args = [{ name = \"n\", reg = 1, fromat = \"hex\" }]"));
  EXPECT_THAT(e, StartsWith("eacgm.toml:5:"));
  EXPECT_THAT(e, HasSubstr("probe \"p\": arg \"n\": unknown key \"fromat\" (did you mean "
                           "\"format\"?)"));

  e = error_of(probe_with_args("", "exits = true"));
  EXPECT_THAT(e, StartsWith("eacgm.toml:6:1: probe \"p\": unknown key \"exits\""));
  EXPECT_THAT(e, HasSubstr("did you mean \"exit\"?"));
}

TEST(ConfigParse, WrongTypes) {
  EXPECT_THAT(error_of(lines({"[trace]", "ringbuf_mib = 16.0"})),
              HasSubstr("eacgm.toml:2:15: [trace]: ringbuf_mib must be an integer, not a "
                        "float"));
  EXPECT_THAT(error_of(lines({"[gpu]", "interval_s = \"1s\""})),
              HasSubstr("eacgm.toml:2:14: [gpu]: interval_s must be a number, not a string"));
  EXPECT_THAT(error_of(lines({"[gpu]", "sample = \"yes\""})),
              HasSubstr("eacgm.toml:2:10: [gpu]: sample must be true or false, not a string"));
  EXPECT_THAT(error_of(lines({"trace = 3"})), HasSubstr("eacgm.toml:1:9: trace must be a table"));
  EXPECT_THAT(error_of(probe_with_args("", "exit = 1")),
              HasSubstr("eacgm.toml:6:8: probe \"p\": exit must be true or false"));
  EXPECT_THAT(error_of(probe_with_args("args = { name = \"n\" }")),
              HasSubstr("eacgm.toml:5:8: probe \"p\": args must be an array of tables"));
  EXPECT_THAT(error_of(probe_with_args("args = [1]")),
              HasSubstr("eacgm.toml:5:9: probe \"p\": arg #1 must be a table"));
  EXPECT_THAT(error_of(lines({"[probe]", "name = \"p\""})),
              HasSubstr("write each probe under its own [[probe]] header, not [probe]"));
}

TEST(ConfigParse, Catalogs) {
  EXPECT_THAT(error_of(lines({"", "catalogs = \"cuda\""})),
              HasSubstr("eacgm.toml:2:12: catalogs must be an array of strings"));
  EXPECT_THAT(error_of(lines({"catalogs = []"})), HasSubstr("eacgm.toml:1:12: catalogs is empty"));
  EXPECT_THAT(error_of(lines({"catalogs = [\"cuda\", \"\"]"})),
              HasSubstr("eacgm.toml:1:21: catalogs has an empty name"));
  EXPECT_THAT(error_of(lines({"catalogs = [\"cuda\", 3]"})),
              HasSubstr("eacgm.toml:1:21: catalogs entries must be strings"));
  EXPECT_THAT(error_of(lines({"catalogs = [\"cuda\", \"cuda\"]"})),
              HasSubstr("eacgm.toml:1:21: catalog \"cuda\" is listed twice"));
}

TEST(ConfigParse, PinnedProbes) {
  Result<Config> r =
      parse_config(lines({"[trace]", "pinned = [\"cuLaunchKernel\", \"my_alloc\"]"}), "eacgm.toml");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->trace.pinned, (std::vector<std::string>{"cuLaunchKernel", "my_alloc"}));
  EXPECT_TRUE(Config{}.trace.pinned.empty());
  EXPECT_THAT(error_of(lines({"[trace]", "pinned = \"cuLaunchKernel\""})),
              HasSubstr("[trace]: pinned must be an array of probe names"));
  EXPECT_THAT(error_of(lines({"[trace]", "pinned = [\"\"]"})), HasSubstr("pinned entries must be non-empty"));
  EXPECT_THAT(error_of(lines({"[trace]", "pinned = [\"a\", \"a\"]"})),
              HasSubstr("probe \"a\" is pinned twice"));
}

TEST(ConfigParse, DutyCycleIsOnUnlessTurnedOff) {
  EXPECT_TRUE(Config{}.trace.duty_cycle);
  Result<Config> r = parse_config(lines({"[trace]", "duty_cycle = false"}), "eacgm.toml");
  ASSERT_TRUE(r) << r.error();
  EXPECT_FALSE(r->trace.duty_cycle);
  EXPECT_THAT(error_of(lines({"[trace]", "duty_cycle = 1"})), HasSubstr("duty_cycle"));
}

TEST(ConfigParse, DutyMeasuringSettings) {
  const TraceConfig defaults;
  EXPECT_FALSE(defaults.duty_fraction.has_value()) << "unset: the budget sets the fraction";
  EXPECT_TRUE(defaults.duty_switch_log.empty());
  EXPECT_TRUE(defaults.duty_log.empty());
  Result<Config> r = parse_config(lines({"[trace]", "duty_fraction = 0.4", "duty_switch_log = \"/tmp/s.log\"",
                                         "duty_log = \"/tmp/d.log\""}),
                                  "eacgm.toml");
  ASSERT_TRUE(r) << r.error();
  ASSERT_TRUE(r->trace.duty_fraction.has_value());
  EXPECT_DOUBLE_EQ(*r->trace.duty_fraction, 0.4);
  EXPECT_EQ(r->trace.duty_switch_log, "/tmp/s.log");
  EXPECT_EQ(r->trace.duty_log, "/tmp/d.log");
  // The whole time is a fraction too, and may be written as an integer.
  r = parse_config(lines({"[trace]", "duty_fraction = 1"}), "eacgm.toml");
  ASSERT_TRUE(r) << r.error();
  EXPECT_DOUBLE_EQ(*r->trace.duty_fraction, 1.0);

  for (const char* bad :
       {"duty_fraction = 0", "duty_fraction = 1.5", "duty_fraction = -0.2", "duty_fraction = nan"}) {
    EXPECT_THAT(error_of(lines({"[trace]", bad})), HasSubstr("eacgm.toml:2:17: [trace]: duty_fraction = "))
        << bad;
    EXPECT_THAT(error_of(lines({"[trace]", bad})),
                HasSubstr("is out of range: use a fraction in (0, 1], such as 0.5"))
        << bad;
  }
  EXPECT_THAT(error_of(lines({"[trace]", "duty_fraction = \"half\""})),
              HasSubstr("eacgm.toml:2:17: [trace]: duty_fraction must be a number, not a string"));
  EXPECT_THAT(error_of(lines({"[trace]", "duty_switch_log = true"})),
              HasSubstr("eacgm.toml:2:19: [trace]: duty_switch_log must be a string, not a boolean"));
  EXPECT_THAT(error_of(lines({"[trace]", "duty_log = 3"})),
              HasSubstr("eacgm.toml:2:12: [trace]: duty_log must be a string, not an integer"));
  EXPECT_THAT(error_of(lines({"[trace]", "duty_fractoin = 0.5"})),
              HasSubstr("eacgm.toml:2:1: [trace]: unknown key \"duty_fractoin\" (did you mean "
                        "\"duty_fraction\"?)"));
  EXPECT_THAT(error_of(lines({"[trace]", "duty_swich_log = \"x\""})),
              HasSubstr("did you mean \"duty_switch_log\"?"));
  EXPECT_THAT(error_of(lines({"[trace]", "duty_logs = \"x\""})), HasSubstr("did you mean \"duty_log\"?"));
}

TEST(ConfigParse, PerCallTracesBothLayersUnlessAskedForOne) {
  EXPECT_FALSE(Config{}.trace.one_layer);
  Result<Config> r = parse_config(lines({"[trace]", "one_layer = true"}), "eacgm.toml");
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(r->trace.one_layer);
  EXPECT_THAT(error_of(lines({"[trace]", "one_layer = \"yes\""})), HasSubstr("one_layer"));
}

TEST(ConfigParse, TraceRanges) {
  EXPECT_THAT(error_of(lines({"[trace]", "ringbuf_mib = 24"})),
              HasSubstr("eacgm.toml:2:15: [trace]: ringbuf_mib = 24 is not a power of two"));
  EXPECT_THAT(error_of(lines({"[trace]", "ringbuf_mib = 2048"})),
              HasSubstr("eacgm.toml:2:15: [trace]: ringbuf_mib = 2048 is out of range 1..1024"));
  EXPECT_THAT(error_of(lines({"[trace]", "ringbuf_mib = 0"})),
              HasSubstr("eacgm.toml:2:15: [trace]: ringbuf_mib = 0 is out of range"));
  EXPECT_THAT(error_of(lines({"[trace]", "ringbuf_mib = 1", "wakeup_kib = 513"})),
              HasSubstr("eacgm.toml:3:14: [trace]: wakeup_kib = 513 exceeds half the ring "
                        "buffer (ringbuf_mib = 1 allows at most 512)"));
  EXPECT_TRUE(parse_config(lines({"[trace]", "ringbuf_mib = 1", "wakeup_kib = 512"}), "x").ok());
  EXPECT_TRUE(parse_config(lines({"[trace]", "wakeup_kib = 0"}), "x").ok());
  EXPECT_THAT(error_of(lines({"[trace]", "wakeup_kib = -1"})),
              HasSubstr("eacgm.toml:2:14: [trace]: wakeup_kib = -1 is out of range"));
  EXPECT_THAT(error_of(lines({"[trace]", "poll_timeout_ms = 0"})),
              HasSubstr("eacgm.toml:2:19: [trace]: poll_timeout_ms = 0 is out of range "
                        "1..10000"));
  EXPECT_THAT(error_of(lines({"[trace]", "poll_timeout_ms = 10001"})),
              HasSubstr("eacgm.toml:2:19: [trace]: poll_timeout_ms = 10001 is out of range"));
  EXPECT_THAT(error_of(lines({"[trace]", "rescan_interval_s = 0.01"})),
              HasSubstr("eacgm.toml:2:21: [trace]: rescan_interval_s = 0.01 is out of range "
                        "0.05..3600"));
  EXPECT_THAT(error_of(lines({"[trace]", "rescan_interval_s = nan"})),
              HasSubstr("eacgm.toml:2:21: [trace]: rescan_interval_s = nan is out of range"));
  EXPECT_THAT(error_of(lines({"[trace]", "status_interval_s = 0.05"})),
              HasSubstr("eacgm.toml:2:21: [trace]: status_interval_s = 0.05 is out of range: "
                        "use 0 (off) or 0.1..3600"));
  EXPECT_THAT(error_of(lines({"[trace]", "status_interval_s = 3601"})),
              HasSubstr("eacgm.toml:2:21: [trace]: status_interval_s = 3601 is out of range"));
  EXPECT_THAT(error_of(lines({"[gpu]", "interval_s = 0.001"})),
              HasSubstr("eacgm.toml:2:14: [gpu]: interval_s = 0.001 is out of range "
                        "0.01..3600"));
}

TEST(ConfigParse, ProbeRequiredKeys) {
  EXPECT_THAT(error_of(lines({"[[probe]]", "library = \"libfoo.so\"", "symbol = \"f\""})),
              HasSubstr("eacgm.toml:1:1: probe #1: missing required key \"name\""));
  EXPECT_THAT(error_of(lines({"[[probe]]", "name = \"p\"", "symbol = \"f\""})),
              HasSubstr("eacgm.toml:1:1: probe \"p\": missing required key \"library\""));
  EXPECT_THAT(error_of(lines({"[[probe]]", "name = \"p\"", "library = \"libfoo.so\""})),
              HasSubstr("eacgm.toml:1:1: probe \"p\": missing \"symbol\""));
  EXPECT_THAT(error_of(probe_with_args("pattern = \"foo*\"")),
              HasSubstr("eacgm.toml:5:11: probe \"p\": give either symbol"));
}

TEST(ConfigParse, ProbeFieldRulesPointAtTheKey) {
  EXPECT_THAT(error_of(lines({"[[probe]]", "name = \"9p\"", "library = \"l\"", "symbol = \"f\""})),
              HasSubstr("eacgm.toml:2:8: probe \"9p\": name \"9p\" is not valid"));
  EXPECT_THAT(error_of(probe_with_args("domain = \"\"")),
              HasSubstr("eacgm.toml:5:10: probe \"p\": domain is empty"));
  EXPECT_THAT(
      error_of(lines({"[[probe]]", "name = \"p\"", "library = \"/lib/libfoo.so\"", "symbol = \"f\""})),
      HasSubstr("eacgm.toml:3:11: probe \"p\": library \"/lib/libfoo.so\" contains a "
                "directory"));
  EXPECT_THAT(error_of(lines({"[[probe]]", "name = \"p\"", "library = \"l\"", "symbol = \"foo*\""})),
              HasSubstr("eacgm.toml:4:10: probe \"p\": symbol \"foo*\" contains glob "
                        "characters; use pattern"));
}

TEST(ConfigParse, DuplicateProbeNames) {
  std::string e = error_of(lines({"[[probe]]", "name = \"p\"", "library = \"l\"", "symbol = \"f\"",
                                  "[[probe]]", "name = \"p\"", "library = \"l\"", "symbol = \"g\""}));
  EXPECT_THAT(e, HasSubstr("eacgm.toml:6:8: probe \"p\": duplicate probe name (first defined at "
                           "line 2)"));
}

TEST(ConfigParse, RetRules) {
  Result<Config> r = parse_config(probe_with_args("exit = false"), "x");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->probes[0].ret, ReturnKind::kNone);
  r = parse_config(probe_with_args("ret = \"int64\""), "x");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->probes[0].ret, ReturnKind::kInt64);

  EXPECT_THAT(error_of(probe_with_args("exit = false", "ret = \"int32\"")),
              HasSubstr("eacgm.toml:6:7: probe \"p\": ret = \"int32\" needs exit = true"));
  EXPECT_THAT(error_of(probe_with_args("ret = \"int\"")),
              HasSubstr("eacgm.toml:5:7: probe \"p\": unknown ret \"int\" (expected one of "
                        "none, int32, int64, pointer)"));
  EXPECT_TRUE(parse_config(probe_with_args("exit = false", "ret = \"none\""), "x").ok());
}

// A user's function returns data unless `errors` says which results are failures.
TEST(ConfigParse, ErrorsSayWhichResultsAreFailures) {
  Result<Config> r = parse_config(probe_with_args(""), "x");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(error_rule(r->probes[0]), ErrorRule::kNone) << "an int32 result is not an error code by default";
  const std::pair<const char*, ErrorRule> rules[] = {{"nonzero", ErrorRule::kNonZero},
                                                     {"negative", ErrorRule::kNegative},
                                                     {"minus_one", ErrorRule::kMinusOne}};
  for (const auto& [name, rule] : rules) {
    const std::string line = std::string("errors = \"") + name + "\"";
    r = parse_config(probe_with_args(line.c_str()), "x");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(error_rule(r->probes[0]), rule) << name;
  }
  r = parse_config(probe_with_args("ret = \"pointer\"", "errors = \"null\""), "x");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(error_rule(r->probes[0]), ErrorRule::kNull);

  EXPECT_THAT(
      error_of(probe_with_args("errors = \"nonzer\"")),
      HasSubstr("eacgm.toml:5:10: probe \"p\": unknown errors \"nonzer\" (did you mean \"nonzero\"?"));
  EXPECT_THAT(error_of(probe_with_args("errors = \"null\"")),
              HasSubstr("probe \"p\": errors = \"null\" is for functions that return a pointer"));
  EXPECT_THAT(error_of(probe_with_args("ret = \"pointer\"", "errors = \"negative\"")),
              HasSubstr("errors = \"negative\" reads a number, not a pointer"));
  EXPECT_THAT(error_of(probe_with_args("exit = false", "errors = \"nonzero\"")),
              HasSubstr("errors = \"nonzero\" reads the return value: it needs ret"));
}

TEST(ConfigParse, ArgKindAndFormat) {
  std::string e = error_of(probe_with_args("args = [{ name = \"size\", reg = 1, kind = \"u16\" }]"));
  EXPECT_EQ(e,
            "eacgm.toml:5:42: probe \"p\": arg \"size\": unknown kind \"u16\" (expected one "
            "of raw, u32, deref_u32, deref_u64, dim3, deref_dim3, string, dim3_split)");
  e = error_of(probe_with_args("args = [{ name = \"size\", reg = 1, kind = \"deref_u46\" }]"));
  EXPECT_THAT(e, HasSubstr("eacgm.toml:5:42: probe \"p\": arg \"size\": unknown kind "
                           "\"deref_u46\" (did you mean \"deref_u64\"?"));
  e = error_of(probe_with_args("args = [{ name = \"size\", reg = 1, format = \"decimal\" }]"));
  EXPECT_THAT(e, HasSubstr("eacgm.toml:5:44: probe \"p\": arg \"size\": unknown format "
                           "\"decimal\" (expected one of unsigned, signed, hex)"));
  e = error_of(probe_with_args("args = [{ name = \"size\", reg = 1, at_exit = \"yes\" }]"));
  EXPECT_THAT(e, HasSubstr("eacgm.toml:5:45: probe \"p\": arg \"size\": at_exit must be true "
                           "or false"));
}

TEST(ConfigParse, ArgSourceRules) {
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"n\" }]")),
              HasSubstr("eacgm.toml:5:9: probe \"p\": arg \"n\": missing \"reg\""));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"n\", reg = 1, stack = 2 }]")),
              HasSubstr("eacgm.toml:5:40: probe \"p\": arg \"n\": give either reg"));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"n\", reg = 6 }]")),
              HasSubstr("eacgm.toml:5:29: probe \"p\": arg \"n\": reg 6 is out of range 0..5"));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"n\", reg = -1 }]")),
              HasSubstr("eacgm.toml:5:29: probe \"p\": arg \"n\": reg = -1 is out of range "
                        "0..5"));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"n\", reg = \"rdi\" }]")),
              HasSubstr("eacgm.toml:5:29: probe \"p\": arg \"n\": reg must be an integer"));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"n\", stack = 32 }]")),
              HasSubstr("eacgm.toml:5:31: probe \"p\": arg \"n\": stack slot 32 is out of range "
                        "0..31"));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"n\", stack = 1000 }]")),
              HasSubstr("eacgm.toml:5:31: probe \"p\": arg \"n\": stack = 1000 is out of range "
                        "0..31"));
}

// Pointer chains: `from` names an earlier arg whose captured value this one reads through.
TEST(ConfigParse, PointerChainsFromEarlierArgs) {
  auto config = parse_config(
      probe_with_args("args = [{ name = \"inner\", reg = 0, kind = \"deref_u64\", offset = 8 },\n"
                      "  { name = \"name_ptr\", from = \"inner\", kind = \"deref_u64\", offset = 8 },\n"
                      "  { name = \"name\", from = \"name_ptr\", kind = \"string\" },\n"
                      "  { name = \"count\", from = \"inner\", kind = \"deref_u32\", offset = 16 }]"),
      "eacgm.toml");
  ASSERT_TRUE(config.ok()) << config.error();
  const auto& args = config->probes.at(0).args;
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[1].source, ArgSource::kArg);
  EXPECT_EQ(args[1].index, 0);
  EXPECT_EQ(args[1].offset, 8);
  EXPECT_EQ(args[2].source, ArgSource::kArg);
  EXPECT_EQ(args[2].index, 1);
  EXPECT_EQ(args[2].kind, ArgKind::kString);
  EXPECT_EQ(args[3].index, 0);
  EXPECT_EQ(args[3].kind, ArgKind::kDerefU32);

  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"n\", from = \"n\" }]")),
              HasSubstr("probe \"p\": arg \"n\": from = \"n\" names no earlier arg of this "
                        "probe (none before this one)"));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"a\", reg = 0 }, { name = \"n\", from "
                                       "= \"b\" }]")),
              HasSubstr("arg \"n\": from = \"b\" names no earlier arg of this probe (a)"));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"a\", reg = 0 }, { name = \"n\", from "
                                       "= \"a\", reg = 1 }]")),
              HasSubstr("arg \"n\": give either from (an earlier arg's value) or reg, not both"));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"a\", reg = 0, kind = \"deref_u64\", "
                                       "at_exit = true }, { name = \"n\", from = \"a\", kind = "
                                       "\"deref_u32\" }]")),
              HasSubstr("arg \"n\": a pointer chain is read at entry"));
}

TEST(ConfigParse, Dim3Rules) {
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"g\", reg = 5, kind = \"dim3\" }]")),
              HasSubstr("eacgm.toml:5:29: probe \"p\": arg \"g\": a dim3 passed by value in "
                        "reg 5 needs the next register"));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"g\", stack = 31, kind = \"dim3\" }]")),
              HasSubstr("eacgm.toml:5:31: probe \"p\": arg \"g\": a dim3 passed by value takes "
                        "two stack slots"));
  EXPECT_TRUE(
      parse_config(probe_with_args("args = [{ name = \"g\", stack = 30, kind = \"dim3\" }]"), "x").ok());
}

TEST(ConfigParse, AtExitRules) {
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"n\", reg = 0, at_exit = true }]")),
              HasSubstr("eacgm.toml:5:42: probe \"p\": arg \"n\": at_exit = true only applies to kinds "
                        "that read memory"));
  EXPECT_THAT(
      error_of(probe_with_args("args = [{ name = \"n\", reg = 0, kind = \"deref_u32\", at_exit = true }]",
                               "exit = false")),
      HasSubstr("eacgm.toml:5:62: probe \"p\": arg \"n\": at_exit = true needs exit = true"));
}

TEST(ConfigParse, ArgCountNamesAndStrings) {
  std::string nine = "args = [";
  for (int i = 0; i < 9; ++i) nine += "{ name = \"a" + std::to_string(i) + "\", reg = 0 },";
  nine += "]";
  EXPECT_THAT(error_of(probe_with_args(nine.c_str())),
              HasSubstr("eacgm.toml:5:8: probe \"p\": 9 args given; at most 8"));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"Size\", reg = 0 }]")),
              HasSubstr("eacgm.toml:5:18: probe \"p\": arg \"Size\": name \"Size\" is not valid"));
  EXPECT_THAT(error_of(probe_with_args("args = [{ reg = 0 }]")),
              HasSubstr("eacgm.toml:5:9: probe \"p\": arg #1: missing required key \"name\""));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"a\", reg = 0 }, { name = \"a\", reg = 1 }]")),
              HasSubstr("eacgm.toml:5:43: probe \"p\": arg \"a\": duplicate arg name \"a\" "
                        "(also arg #1)"));
  EXPECT_THAT(error_of(probe_with_args("args = [{ name = \"a\", reg = 0, kind = \"string\" }, "
                                       "{ name = \"b\", reg = 1, kind = \"string\" }, "
                                       "{ name = \"c\", reg = 2, kind = \"string\" }]")),
              HasSubstr("eacgm.toml:5:123: probe \"p\": arg \"c\": a third string arg"));
}

// The example in the user guide must stay a valid file.
TEST(ConfigParse, DocumentedExampleParses) {
  std::ifstream in(std::string(EACGM_SOURCE_DIR) + "/docs/config.md");
  ASSERT_TRUE(in.good());
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string fence = "```toml\n";
  auto begin = doc.find(fence);
  ASSERT_NE(begin, std::string::npos);
  begin += fence.size();
  auto end = doc.find("```", begin);
  ASSERT_NE(end, std::string::npos);
  Result<Config> r = parse_config(doc.substr(begin, end - begin), "docs/config.md");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->probes.size(), 3u);
  EXPECT_EQ(r->probes[0].args.size(), 3u);
  EXPECT_TRUE(r->probes[1].waits);
  EXPECT_TRUE(r->probes[2].symbol_is_pattern);
  EXPECT_EQ(r->hangs.min_age_s, 5.0);
}

TEST(ConfigParse, DocumentedPointerChainParses) {
  std::ifstream in(std::string(EACGM_SOURCE_DIR) + "/docs/config.md");
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string fence = "```toml\n";
  auto begin = doc.find(fence, doc.find("Pointer chains:"));
  ASSERT_NE(begin, std::string::npos);
  begin += fence.size();
  auto end = doc.find("```", begin);
  Result<Config> r = parse_config(doc.substr(begin, end - begin), "docs/config.md");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->probes.size(), 1u);
  const auto& args = r->probes[0].args;
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[2].source, ArgSource::kArg);
  EXPECT_EQ(args[2].index, 1);
}

TEST(ConfigParse, LoadFile) {
  Result<Config> missing = load_config_file("/nonexistent/eacgm.toml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(),
            "cannot read config /nonexistent/eacgm.toml: No such file or "
            "directory");

  Result<Config> dir = load_config_file("/");
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(dir.error(), HasSubstr("cannot read config /: Is a directory"));

  std::string path = testing::TempDir() + "eacgm_config_parse_test_" + std::to_string(::getpid()) + ".toml";
  {
    std::ofstream out(path);
    out << "[gpu]\ninterval_s = 0.25\n[trace]\nringbuf_mb = 8\n";
  }
  Result<Config> bad = load_config_file(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error(), StartsWith(path + ":4:1: [trace]: unknown key"));
  {
    std::ofstream out(path);
    out << "[gpu]\ninterval_s = 0.25\n";
  }
  Result<Config> good = load_config_file(path);
  std::remove(path.c_str());
  ASSERT_TRUE(good.ok()) << good.error();
  EXPECT_DOUBLE_EQ(good->gpu.interval_s, 0.25);
}

}  // namespace
}  // namespace eacgm
