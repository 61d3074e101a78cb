// The configuration file whole: every section together, the embedded defaults, unknown
// sections, syntax and file errors, and what a daemon's reload hands the agent.
#include "node/node_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../common/config_text.h"

namespace eacgm::node {
namespace {

using test::lines;

std::string error_of(const std::string& text) {
  Result<NodeConfig> r = parse_config(text, "eacgm.toml");
  return r.ok() ? std::string("<accepted>") : r.error();
}

TEST(NodeConfig, EmptyFileGivesDefaults) {
  for (const char* text : {"", "# only a comment\n\n"}) {
    Result<NodeConfig> r = parse_config(text, "eacgm.toml");
    ASSERT_TRUE(r.ok()) << r.error();
    const NodeConfig defaults;
    EXPECT_EQ(r->agent.trace.ringbuf_mib, defaults.agent.trace.ringbuf_mib);
    EXPECT_EQ(r->agent.trace.wakeup_kib, defaults.agent.trace.wakeup_kib);
    EXPECT_EQ(r->agent.trace.poll_timeout_ms, defaults.agent.trace.poll_timeout_ms);
    EXPECT_EQ(r->agent.trace.rescan_interval_s, defaults.agent.trace.rescan_interval_s);
    EXPECT_EQ(r->agent.trace.status_interval_s, defaults.agent.trace.status_interval_s);
    EXPECT_EQ(r->agent.gpu.interval_s, defaults.agent.gpu.interval_s);
    EXPECT_TRUE(r->agent.gpu.sample);
    EXPECT_FALSE(r->agent.trace.host_waits.has_value()) << "unset: the command's default";
    EXPECT_TRUE(r->agent.catalogs.empty());
    EXPECT_TRUE(r->agent.probes.empty());
  }
}

TEST(NodeConfig, FullFileRoundTrips) {
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
  Result<NodeConfig> r = parse_config(text, "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  const NodeConfig& c = *r;
  EXPECT_EQ(c.agent.catalogs, (std::vector<std::string>{"cuda", "nccl"}));
  EXPECT_EQ(c.agent.trace.ringbuf_mib, 64u);
  EXPECT_EQ(c.agent.trace.wakeup_kib, 512u);
  EXPECT_EQ(c.agent.trace.poll_timeout_ms, 250u);
  EXPECT_DOUBLE_EQ(c.agent.trace.rescan_interval_s, 0.5);
  EXPECT_DOUBLE_EQ(c.agent.trace.status_interval_s, 0.0);
  EXPECT_DOUBLE_EQ(c.agent.gpu.interval_s, 2.0);
  EXPECT_FALSE(c.agent.gpu.sample);
  ASSERT_EQ(c.agent.probes.size(), 3u);

  const ProbeSpec& a = c.agent.probes[0];
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

  const ProbeSpec& b = c.agent.probes[1];
  EXPECT_EQ(b.name, "ns::op.v2-x");
  EXPECT_EQ(b.domain, "torch");
  EXPECT_EQ(b.library, "libtorch_python.so");
  EXPECT_EQ(b.symbol, "_ZN5torch*");
  EXPECT_TRUE(b.symbol_is_pattern);
  EXPECT_FALSE(b.with_exit);
  EXPECT_EQ(b.ret, ReturnKind::kNone);  // default when exit = false
  EXPECT_TRUE(b.args.empty());

  const ProbeSpec& d = c.agent.probes[2];
  EXPECT_EQ(d.ret, ReturnKind::kPointer);
  ASSERT_EQ(d.args.size(), 1u);  // [[probe.args]] works as well as inline tables
  EXPECT_EQ(d.args[0].name, "dims");
  EXPECT_EQ(d.args[0].index, 5);
  EXPECT_EQ(d.args[0].kind, ArgKind::kDerefDim3);
}

TEST(NodeConfig, TomlSyntaxErrorKeepsLine) {
  std::string e = error_of(lines({"[trace]", "ringbuf_mib = 16", "wakeup_kib = = 3"}));
  EXPECT_THAT(e, StartsWith("eacgm.toml:3:"));
  EXPECT_THAT(e, HasSubstr("TOML syntax error"));
  // toml++'s own duplicate-key error is a syntax error too.
  EXPECT_THAT(error_of(lines({"[gpu]", "interval_s = 1", "interval_s = 2"})), StartsWith("eacgm.toml:3:"));
}

// The example in the user guide must stay a valid file.
TEST(NodeConfig, DocumentedExampleParses) {
  std::ifstream in(std::string(EACGM_SOURCE_DIR) + "/docs/config.md");
  ASSERT_TRUE(in.good());
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string fence = "```toml\n";
  auto begin = doc.find(fence);
  ASSERT_NE(begin, std::string::npos);
  begin += fence.size();
  auto end = doc.find("```", begin);
  ASSERT_NE(end, std::string::npos);
  Result<NodeConfig> r = parse_config(doc.substr(begin, end - begin), "docs/config.md");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->agent.probes.size(), 3u);
  EXPECT_EQ(r->agent.probes[0].args.size(), 3u);
  EXPECT_TRUE(r->agent.probes[1].waits);
  EXPECT_TRUE(r->agent.probes[2].symbol_is_pattern);
  EXPECT_EQ(r->agent.hangs.min_age_s, 5.0);
}

TEST(NodeConfig, LoadFile) {
  Result<NodeConfig> missing = load_config("/nonexistent/eacgm.toml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(),
            "cannot read config /nonexistent/eacgm.toml: No such file or "
            "directory");

  Result<NodeConfig> dir = load_config("/");
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(dir.error(), HasSubstr("cannot read config /: Is a directory"));

  std::string path = testing::TempDir() + "eacgm_config_parse_test_" + std::to_string(::getpid()) + ".toml";
  {
    std::ofstream out(path);
    out << "[gpu]\ninterval_s = 0.25\n[trace]\nringbuf_mb = 8\n";
  }
  Result<NodeConfig> bad = load_config(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error(), StartsWith(path + ":4:1: [trace]: unknown key"));
  {
    std::ofstream out(path);
    out << "[gpu]\ninterval_s = 0.25\n";
  }
  Result<NodeConfig> good = load_config(path);
  std::remove(path.c_str());
  ASSERT_TRUE(good.ok()) << good.error();
  EXPECT_DOUBLE_EQ(good->agent.gpu.interval_s, 0.25);
}

TEST(NodeConfig, TheEmbeddedDefaults) {
  Result<NodeConfig> r = load_config("");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->serve.listen, "127.0.0.1:9977");
  EXPECT_EQ(r->store.url, "");
  EXPECT_TRUE(r->kubernetes.enabled);
  EXPECT_EQ(r->agent.python.sample_hz, 99u);
  EXPECT_EQ(r->agent.hangs.hang_after_s, 600.0);
  EXPECT_TRUE(r->agent.probes.empty());
}

TEST(NodeConfig, EverySectionTogether) {
  Result<NodeConfig> r = parse_config(
      lines({"catalogs = [\"cuda\"]", "[trace]", "ringbuf_mib = 32", "[gpu]", "interval_s = 5", "[python]",
             "sample_hz = 49", "[[probe]]", "name = \"f\"", "library = \"libfoo.so\"", "symbol = \"foo\"",
             "[serve]", "listen = \"0.0.0.0:9977\"", "[hangs]", "min_age_s = 2", "[store]", "url = \"off\"",
             "[kubernetes]", "enabled = false"}),
      "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->agent.catalogs, (std::vector<std::string>{"cuda"}));
  EXPECT_EQ(r->agent.trace.ringbuf_mib, 32u);
  EXPECT_EQ(r->agent.gpu.interval_s, 5.0);
  EXPECT_EQ(r->agent.python.sample_hz, 49u);
  ASSERT_EQ(r->agent.probes.size(), 1u);
  EXPECT_EQ(r->serve.listen, "0.0.0.0:9977");
  EXPECT_EQ(r->agent.hangs.min_age_s, 2.0);
  EXPECT_EQ(r->store.url, "off");
  EXPECT_FALSE(r->kubernetes.enabled);
}

TEST(NodeConfig, UnknownSectionsAreErrorsWithSuggestion) {
  std::string e = error_of(lines({"", "catalog = [\"cuda\"]"}));
  EXPECT_THAT(e, StartsWith("eacgm.toml:2:1: unknown key \"catalog\""));
  EXPECT_THAT(e, HasSubstr("did you mean \"catalogs\"?"));
  EXPECT_EQ(error_of(lines({"[sever]"})), "eacgm.toml:1:2: unknown key \"sever\" (did you mean \"serve\"?)");
  // Nothing close: every section, in the order the documentation gives them.
  EXPECT_EQ(error_of(lines({"[metrics]"})),
            "eacgm.toml:1:2: unknown key \"metrics\" (expected one of catalogs, trace, gpu, python, probe, "
            "serve, hangs, nccl, store, report, kubernetes)");
  EXPECT_THAT(error_of(lines({"trace = 3"})), HasSubstr("eacgm.toml:1:9: trace must be a table"));
  EXPECT_THAT(error_of(lines({"[serve]", "max_clients = 0"})),
              HasSubstr("eacgm.toml:2:15: [serve]: max_clients = 0 is out of range 1..256"));
}

TEST(NodeConfig, NcclSectionSizesTheFlightRecorder) {
  auto r = parse_config(lines({"[nccl]", "flight_recorder_entries = 256"}), "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->agent.nccl.flight_recorder_entries, 256u);
  EXPECT_EQ(parse_config("", "eacgm.toml")->agent.nccl.flight_recorder_entries, 64u);
  EXPECT_THAT(error_of(lines({"[nccl]", "flight_recorder_entries = 0"})), HasSubstr("out of range 1..4096"));
  EXPECT_THAT(error_of(lines({"[nccl]", "entries = 8"})), HasSubstr("unknown key \"entries\""));
}

TEST(NodeConfig, ReportSectionPricesGpuHours) {
  auto r = parse_config(lines({"[report]", "gpu_hour_price = 2.5", "currency = \"EUR\"",
                               "idle_threshold = 0.1", "top_kernels = 8"}),
                        "eacgm.toml");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->report.gpu_hour_price, 2.5);
  EXPECT_EQ(r->report.currency, "EUR");
  EXPECT_EQ(r->report.idle_threshold, 0.1);
  EXPECT_EQ(r->report.top_kernels, 8u);
  auto defaults = parse_config("", "eacgm.toml");
  ASSERT_TRUE(defaults);
  EXPECT_EQ(defaults->report.idle_threshold, 0.05);
  EXPECT_EQ(defaults->report.gpu_hour_price, 0.0);
  EXPECT_EQ(defaults->report.top_kernels, 5u);
  EXPECT_THAT(error_of(lines({"[report]", "top_kernels = 0"})),
              HasSubstr("[report]: top_kernels = 0 is out of range"));
  EXPECT_THAT(error_of(lines({"[report]", "gpu_hour_price = -1"})),
              HasSubstr("eacgm.toml:2:18: [report]: gpu_hour_price = -1 is out of range"));
  EXPECT_THAT(error_of(lines({"[report]", "idle_threshold = 2"})),
              HasSubstr("[report]: idle_threshold = 2 is out of range 0..1"));
  EXPECT_THAT(error_of(lines({"[report]", "currency = \"US dollars\""})),
              HasSubstr("[report]: currency must be a short code"));
  EXPECT_THAT(error_of(lines({"[report]", "price = 3"})), HasSubstr("unknown key \"price\""));
}

TEST(NodeConfig, CheckedConfigNamesMissingProbes) {
  std::string path = testing::TempDir() + "eacgm_node_config_test_" + std::to_string(::getpid()) + ".toml";
  {
    std::ofstream out(path);
    out << "catalogs = [\"no_such_catalog\"]\n";
  }
  Result<NodeConfig> bad = load_checked_config(path, {});
  std::remove(path.c_str());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error_kind(), ErrorKind::kUsage);
  EXPECT_THAT(bad.error(), HasSubstr("no_such_catalog"));
  EXPECT_TRUE(load_checked_config("", {}).ok());
  EXPECT_FALSE(load_checked_config("", {"no_such_probe"}).ok());
}

TEST(NodeConfig, TheDaemonRescansAtItsOwnInterval) {
  Result<NodeConfig> r =
      parse_config(lines({"[trace]", "rescan_interval_s = 0.5", "[serve]", "rescan_interval_s = 20"}), "x");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->agent.trace.rescan_interval_s, 0.5) << "trace and run";
  const agent::AgentConfig daemon = daemon_agent_config(*r);
  EXPECT_EQ(daemon.trace.rescan_interval_s, 20.0);
  EXPECT_EQ(daemon.trace.ringbuf_mib, r->agent.trace.ringbuf_mib);
}

TEST(NodeConfig, AReloadSaysWhatWaitsForTheNextStart) {
  const NodeConfig before;
  EXPECT_TRUE(next_start_changes(before, before).empty());
  NodeConfig after = before;
  after.agent.trace.ringbuf_mib = 64;
  after.serve.max_clients = 4;
  EXPECT_TRUE(next_start_changes(before, after).empty()) << "they apply at the reload";
  after.store.node = "other";
  after.kubernetes.refresh_s = 5;
  after.serve.token_file = "/etc/eacgm/token";
  EXPECT_EQ(next_start_changes(before, after),
            (std::vector<std::string>{"reload: [store] url, node and fleet_url apply at the next start",
                                      "reload: [kubernetes] applies at the next start",
                                      "reload: [serve] listen and token_file apply at the next start"}));
}

}  // namespace
}  // namespace eacgm::node
