// What a new user meets in the first hour: the traced command's output kept out of the
// event stream, orphan_exits that count only this trace's calls, a bounded output,
// late libraries under --pid, exit 74 when events could not be written, and --comm
// (and `eacgm --demo`) showing one job on a busy machine.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "events.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using nlohmann::json;

// Every non-empty line of `text`, which must each be a JSON object.
std::vector<json> all_json_lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    EXPECT_TRUE(json::accept(line)) << "not JSON: " << line;
    if (json::accept(line)) out.push_back(json::parse(line));
  }
  return out;
}

// The value of `key=N` in eacgm's final accounting line; -1 when absent.
long long accounting_value(const std::string& err, const std::string& key) {
  std::smatch m;
  std::regex re("done .*\\b" + key + "=(\\d+)");
  if (!std::regex_search(err, m, re)) return -1;
  return std::stoll(m[1]);
}

std::string libcudart_copy(const std::string& dir) {
  std::string copy = dir + "/libcudart.so.13";
  std::filesystem::copy_file(std::filesystem::canonical(EACGM_TEST_CUDART), copy);
  return copy;
}

TEST(FirstHour, TracedCommandOutputGoesToStderrWhenEventsGoToStdout) {
  Subprocess eacgm(
      {bin("eacgm"), "trace", "--no-gpu", "--", "/bin/sh", "-c", "echo hello; exec " + bin("cuda_calls")});
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  auto events = all_json_lines(eacgm.out());
  EXPECT_EQ(events.size(), 12u) << eacgm.out() << eacgm.err();  // 11 calls and one registration
  EXPECT_EQ(eacgm.out().find("hello"), std::string::npos) << eacgm.out();
  EXPECT_NE(eacgm.err().find("hello\n"), std::string::npos) << eacgm.err();
  // cuda_calls' own "NAME ret=N" lines are on stderr too, and match the events.
  auto rets = program_returns(eacgm.err());
  EXPECT_EQ(rets["cudaMalloc"].size(), 2u) << eacgm.err();
  for (const auto& e : events) EXPECT_EQ(e["comm"], "cuda_calls");
}

TEST(FirstHour, OrphanExitsIgnoreProcessesOutsideTheFilter) {
  // An untraced CUDA program keeps calling the library the probes are attached to.
  std::string dir = temp_dir();
  std::string iterations = dir + "/iterations";
  Subprocess noise(
      {"/bin/sh", "-c",
       "while :; do " + bin("cuda_calls") + " --repeat 50 >/dev/null; echo x >> " + iterations + "; done"});
  auto count_iterations = [&] {
    std::string s = read_file(iterations);
    return static_cast<long>(std::count(s.begin(), s.end(), '\n'));
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (count_iterations() < 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(count_iterations(), 1) << "the untraced CUDA loop did not run";
  const long before = count_iterations();
  Subprocess eacgm({bin("eacgm"), "trace", "--no-gpu", "--probes", "cuda", "--", "/bin/sleep", "2"});
  EXPECT_EQ(eacgm.wait(), 0) << eacgm.err();
  EXPECT_GT(count_iterations(), before) << "the untraced loop made no calls while tracing";
  EXPECT_EQ(accounting_value(eacgm.err(), "orphan_exits"), 0) << eacgm.err();
  EXPECT_EQ(accounting_value(eacgm.err(), "exits_before_attach"), -1) << eacgm.err();
  EXPECT_EQ(accounting_value(eacgm.err(), "events"), 0) << eacgm.err();
  EXPECT_EQ(eacgm.out(), "");
}

TEST(FirstHour, MaxSizeKeepsWholeLinesAndSaysWhatItLeftOut) {
  std::string dir = temp_dir();
  std::string out = dir + "/events.jsonl";
  Subprocess eacgm({bin("eacgm"), "trace", "--no-gpu", "--max-size", "4KiB", "-o", out, "--",
                    bin("cuda_calls"), "--repeat", "200"});
  EXPECT_EQ(eacgm.wait(), 7) << eacgm.err();
  std::string text = read_file(out);
  EXPECT_LE(text.size(), 4096u);
  ASSERT_GT(text.size(), 1000u) << "the output holds the lines that fit";
  EXPECT_EQ(text.back(), '\n');
  auto events = all_json_lines(text);
  EXPECT_GT(events.size(), 3u);
  EXPECT_NE(eacgm.err().find("output limit of 4 KiB reached"), std::string::npos) << eacgm.err();
  std::smatch m;
  std::string err = eacgm.err();
  ASSERT_TRUE(
      std::regex_search(err, m, std::regex(R"((\d+) lines not written: the output reached --max-size)")))
      << err;
  // 200 repetitions of 11 calls and one registration: every one is written or counted.
  EXPECT_EQ(events.size() + std::stoull(m[1]), 200u * 11 + 1) << err;
}

TEST(FirstHour, PidTargetIsHeldUntilLateLibrariesAreAttached) {
  // A running process, traced by --pid, dlopens a private libcudart copy and calls it
  // at once: only holding it at the loader hint catches those calls.
  std::string dir = temp_dir();
  std::string copy = libcudart_copy(dir);
  for (int run = 0; run < 3; ++run) {
    std::string go = dir + "/go" + std::to_string(run);
    std::string out = dir + "/events" + std::to_string(run) + ".jsonl";
    Subprocess program({bin("cuda_dlopen"), copy, go, "--go-before-load"});
    ASSERT_TRUE(program.wait_for("started")) << program.err();
    Subprocess eacgm({bin("eacgm"), "trace", "--no-gpu", "-o", out, "--pid", std::to_string(program.pid())});
    ASSERT_TRUE(eacgm.wait_for("eacgm: tracing pid", true)) << eacgm.err();
    std::ofstream(go).put('1');
    EXPECT_EQ(program.wait(), 0) << program.err();
    EXPECT_EQ(eacgm.wait(std::chrono::seconds(30)), 0) << eacgm.err();
    auto events = parse_events(read_file(out));
    ASSERT_EQ(events.size(), 2u) << "run " << run << ":\n" << read_file(out) << eacgm.err();
    EXPECT_EQ(events[0]["name"], "cudaMalloc");
    EXPECT_EQ(events[0]["args"]["size"], 12345);
    EXPECT_EQ(events[1]["name"], "cudaFree");
    EXPECT_EQ(accounting_value(eacgm.err(), "orphan_exits"), 0) << eacgm.err();
    EXPECT_EQ(eacgm.err().find("not held at library loads"), std::string::npos) << eacgm.err();
  }
}

TEST(FirstHour, FailedWritesExit74) {
  Subprocess eacgm({bin("eacgm"), "trace", "--no-gpu", "-o", "/dev/full", "--", bin("cuda_calls")});
  EXPECT_EQ(eacgm.wait(), 74) << eacgm.err();
  EXPECT_NE(eacgm.err().find("writes to the output failed (disk full?); exit status 74"), std::string::npos)
      << eacgm.err();
}

// A copy of cuda_calls under another name: another job on the machine.
std::string other_job(const std::string& dir) {
  std::string copy = dir + "/other_calls";
  std::filesystem::copy_file(bin("cuda_calls"), copy);
  return copy;
}

TEST(FirstHour, CommShowsOneProcessNameAndCountsTheOthers) {
  std::string dir = temp_dir();
  std::string other = other_job(dir);
  Subprocess eacgm({bin("eacgm"), "trace", "--no-gpu", "--comm", "cuda_calls", "--duration", "60"});
  ASSERT_TRUE(eacgm.wait_for("eacgm: tracing all processes", true)) << eacgm.err();
  Subprocess shown({bin("cuda_calls"), "--repeat", "2"});
  Subprocess hidden({other, "--repeat", "3"});
  EXPECT_EQ(shown.wait(), 7);
  EXPECT_EQ(hidden.wait(), 7);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  eacgm.signal(SIGINT);
  eacgm.wait();
  auto events = all_json_lines(eacgm.out());
  EXPECT_EQ(events_of(events, shown.pid()).size(), 2u * 11 + 1) << eacgm.err();
  for (const auto& e : events) EXPECT_EQ(e["comm"], "cuda_calls") << e.dump();
  EXPECT_TRUE(std::regex_search(
      eacgm.err(), std::regex(R"(eacgm: \d+ calls of other processes not shown \(.*other_calls 34\b)")))
      << eacgm.err();
}

TEST(FirstHour, DemoShowsTheDemosCallsAndCountsOtherProcesses) {
  std::string dir = temp_dir();
  std::string other = other_job(dir);
  Subprocess eacgm({bin("eacgm"), "--demo"});
  ASSERT_TRUE(eacgm.wait_for("eacgm: tracing all processes", true)) << eacgm.err();
  Subprocess hidden({other, "--repeat", "3"});
  EXPECT_EQ(hidden.wait(), 7);
  ASSERT_TRUE(eacgm.wait_for("eacgm-demo[")) << eacgm.out() << eacgm.err();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  eacgm.signal(SIGINT);
  eacgm.wait();
  std::istringstream in(eacgm.out());
  std::string line;
  int demo_lines = 0;
  while (std::getline(in, line)) {
    EXPECT_EQ(line.find("other_calls"), std::string::npos) << line;
    if (line.find(" eacgm-demo[") != std::string::npos) ++demo_lines;
  }
  EXPECT_GE(demo_lines, 6) << eacgm.out();
  EXPECT_TRUE(std::regex_search(
      eacgm.err(), std::regex(R"(eacgm: \d+ calls of other processes not shown \(.*other_calls 34\b)")))
      << eacgm.err();
}

}  // namespace
}  // namespace eacgm::test
