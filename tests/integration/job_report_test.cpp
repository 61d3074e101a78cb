// The job report over a fleet's store and a node's: four `eacgm serve` agents on the fake
// NVML, nodes a and b writing into one PostgreSQL database (a throwaway cluster) and
// again into one SQLite file, while two Slurm jobs share GPU 0 (the fake lists their
// processes there with SM 70% each, beside two of its own). `eacgm report` and /api/v1/history/report give
// the same rows from both stores over one window: each job on both nodes, its GPU-hours, its part of the
// GPU's energy by the SM shares, its cost at [report]'s price.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "../unit/history/pg_cluster.h"
#include "../unit/server/http_client.h"
#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

struct Agent {
  std::uint16_t port = 0;
  std::unique_ptr<Subprocess> serve;
};

class JobReport : public ServeFixture {
 protected:
  void SetUp() override {
    ServeFixture::SetUp();
    if (IsSkipped()) return;
    setenv("EACGM_FAKE_NVML_GPU_COMM", "report_job", 1);
    ASSERT_EQ(cluster_.start(), "");
    ASSERT_EQ(cluster_.create_database("fleet"), "");
    config_ = config("[store]\ninterval_s = 1\n[report]\ngpu_hour_price = 3.6\ncurrency = \"EUR\"\n");
    // The jobs' program: `sleep` under a name of its own, so that only it is "on the GPU".
    std::filesystem::copy_file("/bin/sleep", dir_ + "/report_job");
  }
  Agent start_agent(const std::string& node, const std::string& store) {
    Agent a;
    a.port = free_port();
    a.serve = std::make_unique<Subprocess>(
        std::vector<std::string>{bin("eacgm"), "serve", "--listen", "127.0.0.1:" + std::to_string(a.port),
                                 "--config", config_, "--store", store, "--node", node},
        dir_);
    return a;
  }
  // `eacgm report` over [from, to) of `store`, as JSON.
  json report(const std::string& store, const std::string& from, const std::string& to,
              const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv{bin("eacgm"), "report", "--config", config_, "--store", store,
                                  "--from",     from,     "--to",     to,      "--json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    Subprocess cli(argv, dir_);
    EXPECT_EQ(cli.wait(), 0) << cli.err();
    EXPECT_EQ(cli.err().find(history::test::PgCluster::kPassword), std::string::npos) << cli.err();
    return json::parse(cli.out(), nullptr, false);
  }
  history::test::PgCluster cluster_;
  std::string config_;
};

TEST_F(JobReport, APostgresAndASqliteStoreGiveTheSameRows) {
  const std::string fleet = cluster_.url("fleet");
  const std::string local = "sqlite:" + dir_ + "/eacgm.db";
  std::vector<Agent> agents;
  for (const auto& [node, store] : {std::pair{"node-a", fleet}, std::pair{"node-b", fleet},
                                    std::pair{"node-a", local}, std::pair{"node-b", local}}) {
    agents.push_back(start_agent(node, store));
  }
  for (Agent& a : agents) {
    ASSERT_TRUE(a.serve->wait_for("tracing all processes", true)) << a.serve->err();
    const std::uint16_t port = a.port;
    ASSERT_TRUE(eventually([port] { return server::testing::get(port, "/readyz").status == 200; }))
        << a.serve->err();
  }
  Subprocess job_a({"/usr/bin/env", "SLURM_JOB_ID=7001", dir_ + "/report_job", "60"}, dir_);
  Subprocess job_b({"/usr/bin/env", "SLURM_JOB_ID=7002", dir_ + "/report_job", "60"}, dir_);
  const auto unix_s = [] {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
  // A window of whole seconds in which every agent saw both jobs on GPU 0 throughout.
  std::this_thread::sleep_for(3s);
  const std::string from = std::to_string(unix_s());
  std::this_thread::sleep_for(8s);
  const std::string to = std::to_string(unix_s());
  std::this_thread::sleep_for(3s);  // each agent's last interval of the window written
  job_a.signal(SIGTERM);
  job_b.signal(SIGTERM);
  job_a.wait();
  job_b.wait();

  const json pg = report(fleet, from, to);
  const json lite = report(local, from, to);
  ASSERT_TRUE(pg.is_object() && lite.is_object()) << pg.dump() << "\n" << lite.dump();
  ASSERT_EQ(pg["jobs"].size(), 2u) << pg.dump();
  ASSERT_EQ(lite["jobs"].size(), 2u) << lite.dump();
  EXPECT_EQ(pg["currency"], "EUR");
  const double window_h = (std::stod(to) - std::stod(from)) / 3600;
  for (const json* doc : {&pg, &lite}) {
    for (const json& j : (*doc)["jobs"]) {
      SCOPED_TRACE(j.dump());
      EXPECT_EQ(j["nodes"], json::array({"node-a", "node-b"}));
      EXPECT_EQ(j["gpus"], 2);
      // Both nodes' GPU 0 the whole window, give or take an interval at each end.
      EXPECT_NEAR(j["gpu_hours"].get<double>(), 2 * window_h, 4.0 / 3600);
      EXPECT_NEAR(j["cost"].get<double>(), 3.6 * j["gpu_hours"].get<double>(), 1e-9);
      EXPECT_EQ(j["idle_gpu_hours"], 0.0);  // the fake GPU 0: SM active 80%
      EXPECT_EQ(j["activity_basis"], "sm_active");
      EXPECT_EQ(j["share_basis"], "sm");
      // GPU 0 draws 123.456 W, shared by SM: each job 70 of the 190 that the fake's
      // processes there add up to (its own two have 50 and 0). An interval without a
      // sampling pass has no rows: the next one's energy covers both.
      const double expected_kwh = 0.123456 * 70 / 190 * j["gpu_hours"].get<double>();
      EXPECT_GT(j["energy_kwh"].get<double>(), 0.95 * expected_kwh);
      EXPECT_LT(j["energy_kwh"].get<double>(), 1.3 * expected_kwh);
    }
  }
  // Row by row: the same jobs in the same order, the same figures but for a few intervals.
  for (std::size_t i = 0; i < 2; ++i) {
    const json& a = pg["jobs"][i];
    const json& b = lite["jobs"][i];
    EXPECT_EQ(a["job"], b["job"]);
    for (const char* key : {"nodes", "gpus", "activity_basis", "energy_basis", "share_basis"})
      EXPECT_EQ(a[key], b[key]) << key;
    // Within the four 1 s intervals either node's agents may have written without a
    // sampling pass (so without rows) at a loaded moment.
    EXPECT_NEAR(a["gpu_hours"].get<double>(), b["gpu_hours"].get<double>(), 4.0 / 3600);
    EXPECT_NEAR(a["active_gpu_hours"].get<double>(), b["active_gpu_hours"].get<double>(), 4.0 / 3600);
    EXPECT_NEAR(a["cost"].get<double>(), b["cost"].get<double>(), 3.6 * 4.0 / 3600);
    EXPECT_NEAR(a["energy_kwh"].get<double>(), b["energy_kwh"].get<double>(),
                0.3 * a["energy_kwh"].get<double>());
    // Where the time went: the job's process on each node, traced the whole window; no
    // CUDA calls and no hook, so no waits and GPU time not measured (null, not 0).
    for (const json* t : {&a["time"], &b["time"]}) {
      SCOPED_TRACE(t->dump());
      EXPECT_EQ((*t)["processes"], 2);
      EXPECT_EQ((*t)["wall_basis"], "process_life");
      EXPECT_NEAR((*t)["wall_s"].get<double>(), 2 * 3600 * window_h, 4.0);
      EXPECT_EQ((*t)["host_wait_s"], 0.0);
      EXPECT_EQ((*t)["host_waits"], json::array());
      EXPECT_EQ((*t)["gpu_time_measured"], false);
      EXPECT_TRUE((*t)["gpu_s"].is_null());
      EXPECT_TRUE((*t)["nccl_gpu_s"].is_null());
      EXPECT_EQ((*t)["top_kernels"], json::array());
    }
  }

  // One job, through the API of a PostgreSQL agent and in CSV from SQLite.
  const auto api = json::parse(
      server::testing::get(agents[0].port, "/api/v1/history/report?job=7001&from=" + from + "&to=" + to).body,
      nullptr, false);
  ASSERT_EQ(api["jobs"].size(), 1u) << api.dump();
  EXPECT_EQ(api["jobs"][0]["job"], "7001");
  EXPECT_EQ(api["selector"], json({{"by", "job"}, {"value", "7001"}}));
  EXPECT_EQ(server::testing::get(agents[0].port, "/api/v1/history/report?job=1&pod=p").status, 400);
  // The jobs list carries the report's figures of each job over the same window.
  const auto jobs = json::parse(
      server::testing::get(agents[0].port, "/api/v1/history/jobs?from=" + from + "&to=" + to).body, nullptr,
      false);
  ASSERT_EQ(jobs["jobs"].size(), 2u) << jobs.dump();
  for (const json& j : jobs["jobs"]) {
    SCOPED_TRACE(j.dump());
    const json& r = pg["jobs"][0]["job"] == j["job"] ? pg["jobs"][0] : pg["jobs"][1];
    ASSERT_EQ(r["job"], j["job"]);
    EXPECT_TRUE(j.contains("missing_ranks"));
    for (const char* key :
         {"gpu_hours", "idle_gpu_hours", "idle_share", "energy_kwh", "cost", "idle_cost", "activity_basis"})
      EXPECT_EQ(j[key], r[key]) << key;
  }
  Subprocess csv(
      {bin("eacgm"), "report", "--store", local, "--job", "7002", "--from", from, "--to", to, "--csv"}, dir_);
  EXPECT_EQ(csv.wait(), 0) << csv.err();
  EXPECT_EQ(csv.out().rfind("job,nodes,gpus,gpu_hours,", 0), 0u) << csv.out();
  EXPECT_NE(csv.out().find("\n7002,node-a;node-b,2,"), std::string::npos) << csv.out();
  Subprocess text({bin("eacgm"), "report", "--store", local, "--from", from, "--to", to}, dir_);
  EXPECT_EQ(text.wait(), 0) << text.err();
  EXPECT_EQ(text.out().rfind("JOB ", 0), 0u) << text.out();

  for (Agent& a : agents) {
    a.serve->signal(SIGTERM);
    EXPECT_EQ(a.serve->wait(), 0) << a.serve->err();
  }
}

}  // namespace
}  // namespace eacgm::test
