// The shipped remote-write section (deploy/prometheus/remote_write.yml) on real servers:
// Debian's Prometheus scrapes `eacgm serve` with the shipped rules and remote-writes to a
// second Prometheus standing for the long-term store (--web.enable-remote-write-receiver).
// The store gets the GPU series, the node's series and the recording rules; the series per
// process and the raw histogram buckets stay on the scraping Prometheus. The series counts
// on each side are the cardinality figures in docs/grafana.md.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using namespace std::chrono_literals;

const std::string kRules = EACGM_SOURCE_DIR "/deploy/prometheus/rules/eacgm.rules.yml";
const std::string kRemoteWrite = EACGM_SOURCE_DIR "/deploy/prometheus/remote_write.yml";

class RemoteWrite : public ServeFixture {};

// The value of a one-sample answer, "" when there is none.
std::string scalar(const nlohmann::json& answer) {
  if (!answer.is_object() || answer["data"]["result"].empty()) return "";
  return answer["data"]["result"][0]["value"][1].get<std::string>();
}

TEST_F(RemoteWrite, TheStoreGetsAggregatesAndTheNodeKeepsProcesses) {
  auto serve = start_serve();
  Subprocess program({bin("cuda_calls")});
  EXPECT_EQ(program.wait(), 7);

  // The long-term store: receives only (its one scrape target is a closed port).
  const std::string store_dir = dir_ + "/store";
  std::filesystem::create_directories(store_dir);
  PrometheusServer store(store_dir, 1, {}, "", {"--web.enable-remote-write-receiver"});

  // The shipped section, its URL pointed at the store.
  std::ifstream in(kRemoteWrite);
  std::string section((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string url = "http://mimir:9009/api/v1/push";
  const auto at = section.find(url);
  ASSERT_NE(at, std::string::npos) << section;
  section.replace(at, url.size(), "http://127.0.0.1:" + std::to_string(store.port()) + "/api/v1/write");
  const std::string node_dir = dir_ + "/node";
  std::filesystem::create_directories(node_dir);
  PrometheusServer node(node_dir, port_, {kRules}, section);

  auto count = [](const PrometheusServer& p, const std::string& selector) {
    return scalar(p.query("count(" + selector + ")"));
  };
  ASSERT_TRUE(eventually([&] { return count(store, "DCGM_FI_DEV_GPU_UTIL") == "2"; }, 90s))
      << node.log().substr(0, 3000) << store.log().substr(0, 2000);
  EXPECT_TRUE(
      eventually([&] { return !count(store, "instance_comm:eacgm_process_calls:rate5m").empty(); }, 60s));
  EXPECT_TRUE(eventually([&] { return !count(store, "eacgm_calls_total").empty(); }, 30s));
  // Per process and raw buckets: on the node's Prometheus, never in the store.
  EXPECT_NE(count(node, "eacgm_process_calls_total{comm=\"cuda_calls\"}"), "");
  EXPECT_NE(count(node, "{__name__=~\"eacgm_.+_bucket\"}"), "");
  EXPECT_EQ(count(store, "{__name__=~\"eacgm.+|DCGM.+\",pid!=\"\"}"), "");
  EXPECT_EQ(count(store, "{__name__=~\"eacgm_.+_bucket\"}"), "");

  const std::string all = "{__name__=~\"eacgm.+|DCGM.+|.+:eacgm.+\"}";
  const std::string on_node = count(node, all);
  const std::string in_store = count(store, all);
  RecordProperty("series_on_node", on_node);
  RecordProperty("series_in_store", in_store);
  std::printf("series: node Prometheus %s, long-term store %s\n", on_node.c_str(), in_store.c_str());
  serve->signal(SIGTERM);
  EXPECT_EQ(serve->wait(), 0) << serve->err();
}

}  // namespace
}  // namespace eacgm::test
