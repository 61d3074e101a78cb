// The shipped Grafana dashboards (deploy/grafana/dashboards/*.json) and Prometheus rules
// (deploy/prometheus/rules/eacgm.rules.yml) on real servers: `eacgm serve` traces the test
// programs (a ranked process holding CUDA memory, one that leaks it, host waits, CUDA
// graphs with named kernels, NCCL calls, a driver-API loop over the probes' budget),
// Debian's Prometheus scrapes it every second with the rules loaded, and every PromQL
// expression of the dashboards and of the rules goes through /api/v1/query. Each must
// parse; each but the device-only ones (kDeviceOnly) must return a sample with a number,
// not NaN. The dashboards' variables must list values, and Prometheus must have loaded
// and evaluated every rule of the file without an error. The GPUs are the fake NVML's:
// eacgm exports their DCGM_FI_* and eacgm_gpu_* series as on a GPU machine, under
// dcgm-exporter's names and labels.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

const std::string kDashboards = EACGM_SOURCE_DIR "/deploy/grafana/dashboards";
const std::string kRules = EACGM_SOURCE_DIR "/deploy/prometheus/rules/eacgm.rules.yml";

// Families with no series on a machine without a GPU: an expression that reads one of
// them may return nothing here (it must still parse). Everything else must have data.
constexpr const char* kNoCommunicator =
    "NCCL communicators cannot be created without a GPU (nccl_calls' ncclCommInitRank fails), so no "
    "collective has a communicator, a size or ranks to match";
struct DeviceOnly {
  const char* family;
  const char* reason;
};
constexpr DeviceOnly kDeviceOnly[] = {
    {"eacgm_nccl_algorithm_bandwidth_bytes_per_second", kNoCommunicator},
    {"eacgm_nccl_bus_bandwidth_bytes_per_second", kNoCommunicator},
    {"eacgm_nccl_collective_instances_total", kNoCommunicator},
    {"eacgm_nccl_incomplete_instances_total", kNoCommunicator},
    {"eacgm_nccl_skew_seconds", kNoCommunicator},
    {"eacgm_nccl_last_arrivals_total", kNoCommunicator},
    {"eacgm_nccl_lateness_seconds_total", kNoCommunicator},
    {"eacgm_nccl_straggler", kNoCommunicator},
    // The recording rules over them.
    {"instance_comm_id:eacgm_nccl_skew_seconds:p99_rate5m", kNoCommunicator},
    {"instance_comm_id_nccl_rank:eacgm_nccl_lateness_seconds:mean_rate5m", kNoCommunicator},
};

// The device-only family an expression reads, nullptr when none.
const DeviceOnly* device_only(const std::string& expr) {
  static const std::regex name("[A-Za-z_:][A-Za-z0-9_:]*");
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), name); it != std::sregex_iterator(); ++it) {
    std::string token = it->str();
    for (const char* suffix : {"_bucket", "_count", "_sum"}) {
      if (token.ends_with(suffix) && token.starts_with("eacgm_nccl_skew_seconds")) {
        token.resize(token.size() - std::string(suffix).size());
      }
    }
    for (const auto& d : kDeviceOnly) {
      if (token == d.family) return &d;
    }
  }
  return nullptr;
}

// Grafana's variables as a query of all their values: every dashboard variable is a
// regex matcher's value (`label=~"$var"`), here `.+`, which matches every value as
// Grafana's "All" (`.*`) does but, unlike it, not a label the series lack: a matcher on a
// misspelt label finds nothing. The interval variables get the values they would have
// on a short range.
std::optional<std::string> substitute(const std::string& expr, const std::set<std::string>& variables,
                                      std::string& error) {
  static const std::map<std::string, std::string> kBuiltIn = {
      {"__rate_interval", "30s"}, {"__interval", "15s"}, {"__range", "5m"}};
  std::string out;
  for (std::size_t i = 0; i < expr.size(); ++i) {
    if (expr[i] != '$') {
      out += expr[i];
      continue;
    }
    std::string name;
    if (i + 1 < expr.size() && expr[i + 1] == '{') {
      const auto close = expr.find('}', i);
      if (close == std::string::npos) {
        error = "unterminated ${ in " + expr;
        return std::nullopt;
      }
      name = expr.substr(i + 2, close - i - 2);
      name = name.substr(0, name.find(':'));  // ${var:format}
      i = close;
    } else {
      std::size_t j = i + 1;
      while (j < expr.size() && (std::isalnum(static_cast<unsigned char>(expr[j])) || expr[j] == '_')) ++j;
      name = expr.substr(i + 1, j - i - 1);
      i = j - 1;
    }
    if (auto b = kBuiltIn.find(name); b != kBuiltIn.end()) {
      out += b->second;
    } else if (variables.contains(name)) {
      out += ".+";
    } else {
      error = "undefined variable $" + name + " in " + expr;
      return std::nullopt;
    }
  }
  return out;
}

struct Expression {
  std::string where;  // the dashboard and panel, or the rule
  std::string expr;   // as sent to Prometheus
  bool must_have_data = true;
};

struct LabelQuery {
  std::string where;
  std::string label;
  std::string match;  // a series selector, "" for none
};

void collect_panels(const json& panels, const std::string& board, const std::set<std::string>& variables,
                    std::vector<Expression>& out) {
  for (const auto& p : panels) {
    if (p.contains("panels")) collect_panels(p["panels"], board, variables, out);
    if (!p.contains("targets")) continue;
    for (const auto& t : p["targets"]) {
      const std::string where = board + ": " + p.value("title", "?") + " (" + t.value("refId", "?") + ")";
      std::string error;
      const auto expr = substitute(t.value("expr", ""), variables, error);
      if (!expr) {
        ADD_FAILURE() << where << ": " << error;
        continue;
      }
      out.push_back({where, *expr});
    }
  }
}

bool reads_postgres(const json& doc) {
  for (const auto& p : doc.value("panels", json::array())) {
    if (p.contains("datasource") && p["datasource"].is_object() &&
        p["datasource"].value("type", "") == "postgres")
      return true;
  }
  return false;
}

// Every target of every Prometheus dashboard, and every query variable's label_values().
void collect_dashboards(std::vector<Expression>& exprs, std::vector<LabelQuery>& labels) {
  static const std::regex label_values(R"(^label_values\((?:(.*),\s*)?([A-Za-z_][A-Za-z0-9_]*)\)$)");
  std::size_t boards = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kDashboards)) {
    if (entry.path().extension() != ".json") continue;
    const std::string board = entry.path().filename().string();
    const json doc = json::parse(read_file(entry.path().string()));
    // The history dashboard reads PostgreSQL: grafana_history_sql runs its SQL.
    if (reads_postgres(doc)) continue;
    ++boards;
    std::set<std::string> variables;
    for (const auto& v : doc["templating"]["list"]) variables.insert(v["name"].get<std::string>());
    for (const auto& v : doc["templating"]["list"]) {
      if (v["type"] != "query") continue;
      const std::string query =
          v["query"].is_object() ? v["query"].value("query", "") : v["query"].get<std::string>();
      std::smatch m;
      ASSERT_TRUE(std::regex_match(query, m, label_values)) << board << " $" << v["name"] << ": " << query;
      std::string error;
      const auto match = substitute(m[1].str(), variables, error);
      ASSERT_TRUE(match.has_value()) << board << ": " << error;
      labels.push_back({board + ": $" + v["name"].get<std::string>(), m[2].str(), *match});
    }
    collect_panels(doc["panels"], board, variables, exprs);
  }
  EXPECT_EQ(boards, 3u) << "gpus.json, processes.json, agent.json (history.json reads PostgreSQL)";
}

// A rule file's rules counted the plain way (the YAML is the project's own, one rule per
// `- record:` or `- alert:` line), to compare with what Prometheus loaded.
std::size_t rules_in_file() {
  std::istringstream in(read_file(kRules));
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    const auto at = line.find_first_not_of(' ');
    if (at != std::string::npos &&
        (line.compare(at, 9, "- record:") == 0 || line.compare(at, 8, "- alert:") == 0)) {
      ++n;
    }
  }
  return n;
}

// "" when the answer has a sample with a number (or, for `must_have_data` false, parsed);
// else what was wrong.
std::string judge(const json& answer, bool must_have_data) {
  if (answer.is_discarded()) return "not JSON";
  if (answer.value("status", "") != "success") return "error: " + answer.value("error", answer.dump());
  if (!must_have_data) return "";
  const json& result = answer["data"]["result"];
  if (result.empty()) return "no sample";
  for (const auto& s : result) {
    const std::string v = s["value"][1].get<std::string>();
    if (!std::isnan(std::stod(v))) return "";
  }
  return "only NaN: " + result.dump().substr(0, 300);
}

class Dashboards : public ServeFixture {};

TEST_F(Dashboards, EveryExpressionRunsOnRealPrometheusWithData) {
  const auto started = std::chrono::steady_clock::now();
  ASSERT_TRUE(std::filesystem::exists("/usr/bin/prometheus")) << "Debian's prometheus package is needed";
  // GPU 0 lists the ranked process holding memory (below) as on the GPU.
  setenv("EACGM_FAKE_NVML_GPU_COMM", "memory_leaks", 1);
  // GPU 0 turns faulty from its third pass: the GPU health events have series.
  setenv("EACGM_FAKE_NVML_SCENARIO", "health", 1);
  auto serve =
      start_serve({"--config", config("[gpu]\ninterval_s = 0.2\n[trace]\nhost_waits = true\n")}, "always-on");
  PrometheusServer prometheus(dir_, port_, {kRules});
  ASSERT_TRUE(eventually([&] { return prometheus.ready(); })) << prometheus.log().substr(0, 2000);

  // A rank of a job, holding CUDA memory through the FAKE libcuda until the end.
  const std::string fake_libcuda = bin("fake_libcuda/libcuda.so.1");
  setenv("RANK", "1", 1);
  setenv("LOCAL_RANK", "1", 1);
  setenv("WORLD_SIZE", "2", 1);
  Subprocess holder(
      {bin("memory_leaks"), fake_libcuda, "--wait-file", dir_ + "/go", "--hold-file", dir_ + "/hold"});
  unsetenv("RANK");
  unsetenv("LOCAL_RANK");
  unsetenv("WORLD_SIZE");
  ASSERT_TRUE(holder.wait_for("ready"));
  ASSERT_TRUE(serve->wait_for("fake_libcuda/libcuda.so.1", true)) << serve->err();
  std::ofstream(dir_ + "/go") << "go\n";
  ASSERT_TRUE(holder.wait_for("holding")) << holder.err();

  // Programs that run to their end: a leak at exit, host waits (futex, poll and the
  // synchronizing calls), CUDA graphs with named kernels, NCCL calls where it is built.
  for (std::vector<std::string> argv :
       {std::vector<std::string>{bin("memory_leaks"), fake_libcuda},
        std::vector<std::string>{bin("host_waits"), "--cuda", fake_libcuda, "--cuda-first"},
        std::vector<std::string>{bin("graph_calls"), fake_libcuda}}) {
    Subprocess program(argv, dir_);
    EXPECT_EQ(program.wait(), 0) << argv[0] << "\n" << program.err();
  }
  if (std::filesystem::exists(bin("nccl_calls"))) {
    Subprocess nccl({bin("nccl_calls")}, dir_);
    EXPECT_EQ(nccl.wait(), 0) << nccl.err();
  }
  EXPECT_TRUE(eventually([&] {
    return server::testing::get(port_, "/metrics").body.find("\neacgm_kernel_launches_total{kernel=") !=
           std::string::npos;
  })) << "graph_calls' kernels are named";
  // Then a driver-API loop on the stub libcuda, over the 1% budget on its entry traps
  // alone: its launches and memsets get duty-cycled and estimated (and so, while it runs,
  // would other programs' launches: those ran before). It runs to the end, so that every
  // rate and quantile over the last 30 s has calls.
  Subprocess loop({bin("driver_loop"), "--threads", "1", "--work-us", "20", "--iters", "1000000000",
                   "--wait-file", dir_ + "/loop"});
  ASSERT_TRUE(loop.wait_for("ready")) << loop.err();
  ASSERT_TRUE(serve->wait_for("stubs/libcuda.so", true)) << serve->err();
  std::ofstream(dir_ + "/loop") << "go\n";

  EXPECT_TRUE(eventually([&] { return metric("eacgm_memory_leaks_total") == "3"; }))
      << "the exited program's three leaks";
  EXPECT_TRUE(eventually([&] {
    return server::testing::get(port_, "/metrics").body.find("\neacgm_calls_estimated_total{") !=
           std::string::npos;
  })) << "the loop's launches are duty-cycled";

  // What the dashboards and rules ask.
  std::vector<Expression> exprs;
  std::vector<LabelQuery> labels;
  collect_dashboards(exprs, labels);
  ASSERT_FALSE(HasFailure());
  const std::size_t dashboard_exprs = exprs.size();
  json groups;
  ASSERT_TRUE(eventually([&] {
    const json rules = prometheus_api(prometheus.port(), "/api/v1/rules");
    if (rules.is_discarded() || rules.value("status", "") != "success") return false;
    groups = rules["data"]["groups"];
    for (const auto& g : groups) {
      for (const auto& r : g["rules"]) {
        if (r.value("lastEvaluation", "").starts_with("0001-")) return false;  // not evaluated yet
      }
    }
    return !groups.empty();
  })) << prometheus.log().substr(0, 3000);
  std::size_t loaded = 0;
  for (const auto& g : groups) {
    for (const auto& r : g["rules"]) {
      ++loaded;
      const std::string name = r["name"].get<std::string>();
      EXPECT_EQ(r["health"], "ok") << name << ": " << r.value("lastError", "");
      const std::string query = r["query"].get<std::string>();
      if (r["type"] == "recording") {
        exprs.push_back({"rule " + name, query});
        exprs.push_back({"recorded series " + name, name});
      } else {
        // An alert's condition holds only when something is wrong: it must parse.
        exprs.push_back({"alert " + name, query, false});
      }
    }
  }
  EXPECT_EQ(loaded, rules_in_file()) << "Prometheus loaded every rule of " << kRules;

  std::vector<std::string> device_only_used;
  for (auto& e : exprs) {
    if (const DeviceOnly* d = device_only(e.expr); d != nullptr && e.must_have_data) {
      e.must_have_data = false;
      device_only_used.push_back(e.where + " [" + d->family + "]");
    }
  }

  // Until every expression has its data (scrapes and rule evaluations catch up), then once
  // more to report what is still wrong.
  auto failures = [&] {
    std::vector<std::string> wrong;
    for (const auto& e : exprs) {
      if (const std::string why = judge(prometheus.query(e.expr), e.must_have_data); !why.empty()) {
        wrong.push_back(e.where + ": " + why + "\n    " + e.expr);
      }
    }
    for (const auto& l : labels) {
      std::string path = "/api/v1/label/" + l.label + "/values";
      if (!l.match.empty()) path += "?match[]=" + url_encode(l.match);
      const json answer = prometheus_api(prometheus.port(), path);
      if (answer.is_discarded() || answer.value("status", "") != "success" || answer["data"].empty()) {
        wrong.push_back(l.where + ": no values of " + l.label + " for " + l.match);
      }
    }
    return wrong;
  };
  std::vector<std::string> wrong;
  eventually([&] { return (wrong = failures()).empty(); }, 30s);
  for (const auto& w : wrong) ADD_FAILURE() << w;

  // The device-only list is honest: each entry is read by some expression, and none of
  // those has data here (else it needs no exemption).
  for (const auto& d : kDeviceOnly) {
    bool read = false;
    for (const auto& e : exprs) read |= device_only(e.expr) == &d;
    EXPECT_TRUE(read) << d.family << " is listed device-only but no expression reads it";
  }
  for (const auto& e : exprs) {
    if (device_only(e.expr) == nullptr) continue;
    EXPECT_TRUE(prometheus.query(e.expr)["data"]["result"].empty())
        << e.where << " has data without a GPU: take it off the device-only list\n    " << e.expr;
  }
  std::printf(
      "%zu expressions (%zu from the dashboards, %zu from the rules), %zu variables; %zu device-only:\n",
      exprs.size(), dashboard_exprs, exprs.size() - dashboard_exprs, labels.size(), device_only_used.size());
  for (const auto& d : device_only_used) std::printf("  %s\n", d.c_str());
  std::printf("took %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());

  std::ofstream(dir_ + "/hold") << "go\n";
  EXPECT_EQ(holder.wait(), 0) << holder.err();
  loop.signal(SIGKILL);
  loop.wait();
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
}

}  // namespace
}  // namespace eacgm::test
