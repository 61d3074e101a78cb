// Integration tests (root, real eBPF): run-time probe control through TraceSession
// (kernel hit counts, mute and unmute, detaching a library) and library churn (files
// loaded from fresh paths and deleted again are forgotten, so probes, ids, file
// descriptors and memory stay bounded).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ingest/trace_session.h"
#include "subprocess.h"

namespace eacgm::test {
namespace {

using namespace std::chrono_literals;

const std::string kLib = bin("libeacgm_churn.so");

ProbeSpec churn_spec() {
  ProbeSpec s;
  s.name = "churn_work";
  s.domain = "churn";
  s.library = "libeacgm_churn*";
  s.symbol = "churn_work";
  s.with_exit = true;
  return s;
}

void touch(const std::string& path) { std::ofstream(path) << "\n"; }

// Collects calls from the reader thread.
struct Calls final : Consumer {
  std::mutex mutex;
  std::vector<CallEvent> events;
  std::atomic<std::size_t> count{0};
  void on_calls(std::span<const CallEvent> calls) override {
    std::lock_guard<std::mutex> lock(mutex);
    events.insert(events.end(), calls.begin(), calls.end());
    count = events.size();
  }
};

// The session reads counters through a registry that must outlive it.
CounterRegistry& test_registry() {
  static CounterRegistry registry;
  return registry;
}

// A session tracing `pid` only, holding it at loader hints until attached (as the CLI
// does for a launched command).
std::unique_ptr<ingest::TraceSession> start_session(int pid, std::shared_ptr<Calls> calls, double rescan_s) {
  ingest::TraceOptions o;
  o.specs = {churn_spec()};
  o.filter_pids = true;
  o.stop_on_load = true;
  o.pids = {pid};
  o.config.rescan_interval_s = rescan_s;
  o.config.poll_timeout_ms = 20;
  auto s = ingest::TraceSession::start(
      o, std::move(calls), {}, [](const std::string&) {}, test_registry());
  if (!s) {
    ADD_FAILURE() << s.error();
    return nullptr;
  }
  return std::move(*s);
}

// Services the session's discovery until `done` holds or the timeout passes.
bool service_until(ingest::TraceSession& s, const std::function<bool()>& done,
                   std::chrono::milliseconds timeout = 20s) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    s.service(10ms);
  }
  return done();
}

std::uint64_t hits_of(const ingest::TraceSession& s, std::uint32_t id) {
  auto hits = s.probe_hits();
  auto it = hits.find(id);
  return it == hits.end() ? 0 : it->second;
}

TEST(ProbeControl, HitsCountCallsAndMutedProbesNeitherRecordNorCount) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
  constexpr std::size_t kCalls = 25;
  std::string dir = temp_dir();
  Subprocess p({bin("churn_calls"), "phases", kLib, std::to_string(kCalls), "4", dir}, dir);
  auto calls_ptr = std::make_shared<Calls>();
  Calls& calls = *calls_ptr;
  auto s = start_session(p.pid(), calls_ptr, 0.05);
  ASSERT_TRUE(s);
  touch(dir + "/start");
  ASSERT_TRUE(service_until(*s, [&] { return p.out().find("loaded") != std::string::npos; })) << p.err();
  ASSERT_EQ(s->report().attach.probes, 1u);
  auto hits = s->probe_hits();
  ASSERT_EQ(hits.size(), 1u);
  const std::uint32_t id = hits.begin()->first;
  EXPECT_EQ(hits.begin()->second, 0u);
  EXPECT_EQ(s->probes().get(id)->function, "churn_work");

  // Phase 0: every call arrives and is counted once.
  touch(dir + "/go0");
  ASSERT_TRUE(service_until(*s, [&] {
    return calls.count >= kCalls && p.out().find("phase 0 done") != std::string::npos;
  })) << calls.count;
  EXPECT_EQ(hits_of(*s, id), kCalls);

  // Phase 1, muted by name: no calls arrive, the hit count stands still.
  ASSERT_TRUE(s->set_probe_muted("churn_work", true));
  touch(dir + "/go1");
  ASSERT_TRUE(service_until(*s, [&] { return p.out().find("phase 1 done") != std::string::npos; }));
  s->service(200ms);  // time for stray records to arrive, and for rescans
  EXPECT_EQ(calls.count, kCalls);
  EXPECT_EQ(hits_of(*s, id), kCalls);

  // Phase 2, unmuted by id: both resume.
  ASSERT_TRUE(s->set_probe_muted(id, false));
  touch(dir + "/go2");
  ASSERT_TRUE(service_until(
      *s, [&] { return calls.count >= 2 * kCalls && p.out().find("phase 2 done") != std::string::npos; }));
  s->service(100ms);
  EXPECT_EQ(calls.count, 2 * kCalls);
  EXPECT_EQ(hits_of(*s, id), 2 * kCalls);
  {
    std::lock_guard<std::mutex> lock(calls.mutex);
    for (const auto& e : calls.events) {
      ASSERT_TRUE(e.probe);
      EXPECT_EQ(e.probe->function, "churn_work");
      EXPECT_EQ(e.pid, static_cast<std::uint32_t>(p.pid()));
    }
  }

  // Unknown names and ids are errors that say so.
  auto bad_name = s->set_probe_muted("no_such_function", true);
  ASSERT_FALSE(bad_name);
  EXPECT_NE(bad_name.error().find("no_such_function"), std::string::npos);
  auto bad_id = s->set_probe_muted(std::uint32_t{4000}, true);
  ASSERT_FALSE(bad_id);
  EXPECT_NE(bad_id.error().find("4000"), std::string::npos);

  // Phase 3, library detached: nothing arrives, and rescans do not attach it again.
  auto bad_path = s->detach_library(dir + "/no-such-lib.so");
  ASSERT_FALSE(bad_path);
  EXPECT_NE(bad_path.error().find("no-such-lib.so"), std::string::npos);
  ASSERT_TRUE(s->detach_library(kLib));
  EXPECT_EQ(s->report().attach.probes, 0u);
  EXPECT_EQ(s->report().attach.libraries, 0u);
  EXPECT_EQ(s->report().attach.files_detached, 1u);
  EXPECT_TRUE(s->probe_hits().empty());
  EXPECT_FALSE(s->detach_library(kLib));  // nothing left to detach
  touch(dir + "/go3");
  ASSERT_TRUE(service_until(*s, [&] { return p.out().find("phase 3 done") != std::string::npos; }));
  s->service(200ms);
  EXPECT_EQ(calls.count, 2 * kCalls);
  EXPECT_EQ(s->report().attach.probes, 0u);
  EXPECT_EQ(p.wait(), 0) << p.err();
  s->stop();
}

std::size_t open_fds() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

std::size_t rss_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoul(line.substr(6));
  }
  return 0;
}

TEST(ProbeControl, ChurnedLibrariesAreForgottenAndIdsReused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
  constexpr std::size_t kIterations = 200;
  std::string dir = temp_dir();
  Subprocess p({bin("churn_calls"), "churn", kLib, std::to_string(kIterations), dir}, dir);
  auto calls_ptr = std::make_shared<Calls>();
  Calls& calls = *calls_ptr;
  auto s = start_session(p.pid(), calls_ptr, 0.02);
  ASSERT_TRUE(s);
  touch(dir + "/start");

  std::size_t max_probes = 0, max_libraries = 0;
  std::size_t fds_early = 0, rss_early = 0;
  auto observe = [&] {
    auto a = s->report().attach;
    max_probes = std::max(max_probes, a.probes);
    max_libraries = std::max(max_libraries, a.libraries);
    if (fds_early == 0 && calls.count >= kIterations / 4) {
      fds_early = open_fds();
      rss_early = rss_kib();
    }
  };
  ASSERT_TRUE(service_until(
      *s,
      [&] {
        observe();
        return p.out().find("churned") != std::string::npos;
      },
      120s))
      << p.err();
  ASSERT_EQ(p.wait(), 0) << p.err();
  // The last copies are forgotten at the next rescans.
  ASSERT_TRUE(service_until(
      *s, [&] { return s->report().attach.files_forgotten == kIterations; }, 5s))
      << s->report().attach.files_forgotten;
  ASSERT_TRUE(service_until(
      *s, [&] { return calls.count >= kIterations; }, 5s))
      << calls.count;
  const std::size_t fds_late = open_fds();
  const std::size_t rss_late = rss_kib();

  const auto a = s->report().attach;
  EXPECT_EQ(a.files_forgotten, kIterations);
  EXPECT_EQ(a.probes, 0u);
  EXPECT_EQ(a.libraries, 0u);
  EXPECT_EQ(a.uprobes, 0u);
  EXPECT_EQ(s->probes().live(), 0u);
  // Every copy was attached before its call (the loader hint holds the process), each
  // call decoded against its own copy's probe, though ids were reused.
  EXPECT_EQ(calls.count, kIterations);
  std::set<std::string> libraries;
  {
    std::lock_guard<std::mutex> lock(calls.mutex);
    for (const auto& e : calls.events) {
      ASSERT_TRUE(e.probe);
      EXPECT_EQ(e.probe->function, "churn_work");
      const std::string expected = dir + "/libeacgm_churn-" + std::to_string(e.ret - 1) + ".so";
      EXPECT_EQ(e.probe->library, expected);
      libraries.insert(e.probe->library);
    }
  }
  EXPECT_EQ(libraries.size(), kIterations);
  // Bounded, not proportional to the iterations: what is attached at once, the ids the
  // table ever handed out, file descriptors (one link per attached file) and memory.
  EXPECT_LE(max_probes, kIterations / 4) << "live probes peaked at " << max_probes;
  EXPECT_LE(max_libraries, kIterations / 4);
  EXPECT_LE(s->probes().size(), kIterations / 4) << "probe ids: " << s->probes().size();
  ASSERT_GT(fds_early, 0u);
  EXPECT_LE(fds_late, fds_early + 8) << "fds " << fds_early << " -> " << fds_late;
  EXPECT_LE(rss_late, rss_early + 4096) << "RSS KiB " << rss_early << " -> " << rss_late;
  s->stop();
  EXPECT_FALSE(std::filesystem::exists(dir + "/libeacgm_churn-0.so"));
}

}  // namespace
}  // namespace eacgm::test
