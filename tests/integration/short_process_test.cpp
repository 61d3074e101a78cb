// A process that lives a fraction of a history interval: `serve` reads its facts at its
// first call (node/facts_reader.h), so the history and the API still have its command
// line and its job after it exited, before the interval was written.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "serve_support.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

TEST_F(ServeFixture, AProcessShorterThanAnIntervalKeepsItsCommandLineAndJob) {
  const std::string cfg = config("[store]\ninterval_s = 30\n");
  auto serve = start_serve({"--config", cfg});
  // It lives about a second (its calls, then a wait for the exit file): much less than
  // the interval. (A process of a few milliseconds can exit before its calls are read
  // from the ring buffer; docs/history.md says so.)
  const std::string done = dir_ + "/done";
  Subprocess prog({"/usr/bin/env", "SLURM_JOB_ID=short-1", "RANK=3", bin("cuda_calls"), "--repeat", "1",
                   "--exit-file", done},
                  dir_);
  ASSERT_TRUE(prog.wait_for("calls done")) << prog.err();
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  std::ofstream(done) << "";
  prog.wait();  // its calls fail without a GPU (a non-zero exit), after entering libcudart
  const std::string pid = std::to_string(prog.pid());
  // Gone long before the 30 s interval: SIGHUP writes one now.
  serve->signal(SIGHUP);
  json row;
  ASSERT_TRUE(eventually([&] {
    const json doc =
        json::parse(server::testing::get(port_, "/api/v1/history/processes?since=1h&comm=cuda_calls").body,
                    nullptr, false);
    if (!doc.is_object()) return false;
    for (const auto& p : doc["processes"]) {
      if (std::to_string(p["pid"].get<long>()) == pid) row = p;
    }
    if (row.is_null()) serve->signal(SIGHUP);
    return !row.is_null();
  })) << serve->err();
  EXPECT_NE(row["cmdline"].get<std::string>().find("cuda_calls --repeat 1 --exit-file"), std::string::npos)
      << row.dump();
  EXPECT_EQ(row["job"], "short-1") << row.dump();
  EXPECT_EQ(row["rank"], 3) << row.dump();
}

}  // namespace
}  // namespace eacgm::test
