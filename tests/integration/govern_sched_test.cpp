// libeacgm_hook.so with eacgm-sched, against the FAKE libcuda: time shares between two
// tenants, the tenant's shared memory account (across processes, fork, exit), the
// scheduler down (fail open and fail closed), refused tenants, malformed clients,
// config reload and the metrics endpoint (checked by promtool when installed).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "subprocess.h"

namespace {

using eacgm::test::bin;
using eacgm::test::Subprocess;
using eacgm::test::temp_dir;

std::map<std::string, std::string> values_of(const std::string& out) {
  std::map<std::string, std::string> v;
  std::istringstream in(out);
  std::string word;
  while (in >> word) {
    auto eq = word.find('=');
    if (eq != std::string::npos) v[word.substr(0, eq)] = word.substr(eq + 1);
  }
  return v;
}

std::vector<std::string> hooked(const std::vector<std::string>& env, const std::string& scenario) {
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "-u",
                                   "EACGM_MEMORY_LIMIT",
                                   "-u",
                                   "CUDA_DEVICE_MEMORY_LIMIT",
                                   "LD_PRELOAD=" + bin("libeacgm_hook.so")};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.insert(argv.end(), {bin("govern_calls"), "dlsym", scenario, bin("fake_libcuda/libcuda.so.1")});
  return argv;
}

// eacgm-sched on a scratch socket and a metrics port of its own.
class Scheduler {
 public:
  explicit Scheduler(const std::string& tenants, std::string extra = "")
      : dir_(temp_dir()), extra_(std::move(extra)) {
    port_ = 20000 + static_cast<int>(getpid() % 20000);
    config_ = dir_ + "/sched.toml";
    write(tenants);
    proc_ = std::make_unique<Subprocess>(std::vector<std::string>{bin("eacgm-sched"), "--config", config_});
    EXPECT_TRUE(proc_->wait_for("serving", true, std::chrono::milliseconds(10000))) << proc_->err();
  }
  void write(const std::string& tenants) {
    std::ofstream(config_) << "[scheduler]\ngpus = 1\nsocket = \"" << socket()
                           << "\"\nmetrics = \"127.0.0.1:" << port_
                           << "\"\nwindow_seconds = 2\nmax_slice_ms = 20\n"
                           << extra_ << "\n\n"
                           << tenants;
  }
  std::string socket() const { return dir_ + "/sched.sock"; }
  std::string env() const { return "EACGM_SCHED_SOCKET=" + socket(); }
  // GET /metrics over a plain socket; the body.
  std::string metrics() const {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    std::string response;
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
      const std::string req = "GET /metrics HTTP/1.0\r\n\r\n";
      if (::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
        char buf[4096];
        ssize_t n;
        while ((n = ::read(fd, buf, sizeof buf)) > 0) response.append(buf, static_cast<std::size_t>(n));
      }
    }
    close(fd);
    auto body = response.find("\r\n\r\n");
    return body == std::string::npos ? "" : response.substr(body + 4);
  }
  double metric(const std::string& line_prefix) const {
    std::string m = metrics();
    auto at = m.find("\n" + line_prefix + " ");
    if (at == std::string::npos) return -1;
    return std::strtod(m.c_str() + at + line_prefix.size() + 2, nullptr);
  }
  const std::string& dir() const { return dir_; }
  std::string metrics_address() const { return "127.0.0.1:" + std::to_string(port_); }
  Subprocess& proc() { return *proc_; }

 private:
  std::string dir_, extra_, config_;
  int port_ = 0;
  std::unique_ptr<Subprocess> proc_;
};

const char* kTwoTenants = R"([[tenant]]
name = "small"
request = 0.3
memory_limit = "64MiB"

[[tenant]]
name = "big"
request = 0.7
)";

TEST(GovernSched, TwoBusyTenantsShareTheGpuByRequest) {
  Scheduler s(kTwoTenants);
  std::vector<std::string> env = {s.env(), "EACGM_FAKE_KERNEL_US=1000", "GOVERN_BUSY_SECONDS=6"};
  auto with = [&](const char* tenant) {
    auto e = env;
    e.push_back(std::string("EACGM_TENANT=") + tenant);
    return hooked(e, "busy");
  };
  Subprocess small(with("small"));
  Subprocess big(with("big"));
  ASSERT_EQ(small.wait(), 0) << small.err();
  ASSERT_EQ(big.wait(), 0) << big.err();
  double a = s.metric("eacgm_govern_tenant_gpu_time_seconds_total{tenant=\"small\",gpu=\"0\"}");
  double b = s.metric("eacgm_govern_tenant_gpu_time_seconds_total{tenant=\"big\",gpu=\"0\"}");
  ASSERT_GT(a + b, 1.0);
  EXPECT_NEAR(a / (a + b), 0.3, 0.08) << "small " << a << " s, big " << b << " s";
  EXPECT_EQ(values_of(small.out())["first_error"], "0");
}

TEST(GovernSched, TenantMemoryIsSharedByItsProcessesAndFreedAtExit) {
  Scheduler s(kTwoTenants);
  std::string ready = s.dir() + "/ready";
  Subprocess holder(
      hooked({s.env(), "EACGM_TENANT=small", "GOVERN_HOLD_MIB=48", "GOVERN_HOLD_SECONDS=3"}, "hold"));
  ASSERT_TRUE(holder.wait_for("hold_alloc=0")) << holder.err();
  // A second process of the tenant: 48 + 32 MiB is over its 64 MiB.
  Subprocess second(hooked({s.env(), "EACGM_TENANT=small", "GOVERN_HOLD_MIB=32"}, "hold"));
  second.wait();
  EXPECT_EQ(values_of(second.out())["hold_alloc"], "2") << second.err();
  // Another tenant is not affected.
  Subprocess other(hooked({s.env(), "EACGM_TENANT=big", "GOVERN_HOLD_MIB=1000"}, "hold"));
  other.wait();
  EXPECT_EQ(values_of(other.out())["hold_alloc"], "0");
  // The holder exits without freeing: its connection's memory goes back to the tenant.
  holder.wait();
  Subprocess after(hooked({s.env(), "EACGM_TENANT=small", "GOVERN_HOLD_MIB=60"}, "hold"));
  after.wait();
  EXPECT_EQ(values_of(after.out())["hold_alloc"], "0") << after.err();
}

TEST(GovernSched, LimitsAndViewComeFromTheTenant) {
  Scheduler s(kTwoTenants);
  Subprocess p(hooked({s.env(), "EACGM_TENANT=small"}, "limits"));
  ASSERT_EQ(p.wait(), 0) << p.err();
  auto v = values_of(p.out());
  for (const char* path : {"alloc", "pitch", "managed", "async", "pool", "create", "array", "array3d"})
    EXPECT_EQ(v[std::string("path_") + path], "0,2,0,0") << path;
  Subprocess view(hooked({s.env(), "EACGM_TENANT=small"}, "view"));
  ASSERT_EQ(view.wait(), 0) << view.err();
  auto w = values_of(view.out());
  EXPECT_EQ(w["dev0_after16_free_mib"], "48");
  EXPECT_EQ(w["total_mib"], "64");
  EXPECT_EQ(w["dev0_full_free"], "0");
}

TEST(GovernSched, ForkedChildIsAnotherProcessOfTheTenant) {
  Scheduler s(kTwoTenants);
  Subprocess p(hooked({s.env(), "EACGM_TENANT=small"}, "fork"));
  ASSERT_EQ(p.wait(), 0) << p.err();
  auto v = values_of(p.out());
  EXPECT_EQ(v["parent_first"], "0");
  EXPECT_EQ(v["child_alloc"], "2") << "the child shares the tenant's account over a connection of its own";
  EXPECT_EQ(v["child_status"], "0");
  EXPECT_EQ(v["parent_over"], "2");
}

TEST(GovernSched, ThreadsThroughTheScheduler) {
  Scheduler s(kTwoTenants);
  Subprocess p(hooked({s.env(), "EACGM_TENANT=small"}, "threads"));
  ASSERT_EQ(p.wait(), 0) << p.err();
  auto v = values_of(p.out());
  EXPECT_EQ(v["held_at_once"], "4");
  EXPECT_EQ(v["rounds_failed"], "0");
  EXPECT_EQ(v["whole_limit_after"], "0");
}

// Signals every 300 us interrupt the hook's waits (token, replies): they are resumed
// within their deadlines, and the program runs to its end.
TEST(GovernSched, SignalsDoNotBreakTheWaits) {
  Scheduler s(kTwoTenants);
  Subprocess a(hooked({s.env(), "EACGM_TENANT=small", "EACGM_FAKE_KERNEL_US=500", "GOVERN_BUSY_SECONDS=2",
                       "GOVERN_SIGNAL_US=300"},
                      "busy"));
  Subprocess b(
      hooked({s.env(), "EACGM_TENANT=big", "EACGM_FAKE_KERNEL_US=500", "GOVERN_BUSY_SECONDS=2"}, "busy"));
  ASSERT_EQ(a.wait(), 0) << a.err();
  ASSERT_EQ(b.wait(), 0) << b.err();
  auto v = values_of(a.out());
  EXPECT_EQ(v["first_error"], "0");
  EXPECT_GT(std::stol(v["launches"]), 100);
  EXPECT_GT(std::stol(v["signals"]), 1000);
  EXPECT_EQ(a.err(), "") << "no reconnect: the waits were resumed, not abandoned";
}

TEST(GovernSched, SchedulerDownFailsOpen) {
  std::string dir = temp_dir();
  Subprocess p(hooked({"EACGM_SCHED_SOCKET=" + dir + "/none.sock", "EACGM_FAKE_KERNEL_US=100",
                       "GOVERN_BUSY_SECONDS=1", "EACGM_MEMORY_LIMIT=64MiB"},
                      "busy"));
  ASSERT_EQ(p.wait(std::chrono::seconds(30)), 0) << p.err();
  auto v = values_of(p.out());
  EXPECT_EQ(v["first_error"], "0");
  EXPECT_GT(std::stol(v["launches"]), 100);
  EXPECT_NE(p.err().find("failing open"), std::string::npos) << p.err();
  Subprocess limits(
      hooked({"EACGM_SCHED_SOCKET=" + dir + "/none.sock", "EACGM_MEMORY_LIMIT=64MiB"}, "limits"));
  ASSERT_EQ(limits.wait(), 0);
  EXPECT_EQ(values_of(limits.out())["path_alloc"], "0,2,0,0") << "environment limits still hold";
}

TEST(GovernSched, SchedulerDownFailsClosed) {
  std::string dir = temp_dir();
  Subprocess p(
      hooked({"EACGM_SCHED_SOCKET=" + dir + "/none.sock", "EACGM_FAIL_CLOSED=1", "GOVERN_BUSY_SECONDS=0.5"},
             "busy"));
  ASSERT_EQ(p.wait(std::chrono::seconds(30)), 0) << p.err();
  auto v = values_of(p.out());
  EXPECT_EQ(v["launches"], "0");
  EXPECT_EQ(v["first_error"], "800");  // CUDA_ERROR_NOT_PERMITTED
  Subprocess limits(hooked({"EACGM_SCHED_SOCKET=" + dir + "/none.sock", "EACGM_FAIL_CLOSED=1"}, "limits"));
  ASSERT_EQ(limits.wait(), 0);
  EXPECT_EQ(values_of(limits.out())["path_alloc"], "2,2,0,2") << "no allocation without the scheduler";
}

TEST(GovernSched, SchedulerStoppingMidRunFailsOpenAfterTheTimeout) {
  auto s = std::make_unique<Scheduler>(kTwoTenants);
  std::string env = s->env();
  Subprocess p(hooked({env, "EACGM_TENANT=big", "EACGM_FAKE_KERNEL_US=200", "GOVERN_BUSY_SECONDS=3",
                       "EACGM_SCHED_TIMEOUT_MS=500"},
                      "busy"));
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  s->proc().signal(SIGKILL);
  ASSERT_EQ(p.wait(std::chrono::seconds(30)), 0) << p.err();
  auto v = values_of(p.out());
  EXPECT_EQ(v["first_error"], "0");
  EXPECT_GT(std::stol(v["launches"]), 1000) << "launches go on without the scheduler";
}

TEST(GovernSched, RefusedTenantIsToldAndRunsOpen) {
  Scheduler s(kTwoTenants);
  Subprocess p(hooked({s.env(), "EACGM_TENANT=nobody", "GOVERN_BUSY_SECONDS=0.3"}, "busy"));
  ASSERT_EQ(p.wait(), 0);
  EXPECT_NE(p.err().find("the scheduler refused this process: no tenant \"nobody\""), std::string::npos)
      << p.err();
  EXPECT_EQ(s.metric("eacgm_govern_refused_clients_total"), 1);
}

TEST(GovernSched, MalformedClientIsCutOffAndOthersServed) {
  Scheduler s(kTwoTenants);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", s.socket().c_str());
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const char junk[] = "GET / HTTP/1.0\r\n\r\n";
  ASSERT_GT(write(fd, junk, sizeof junk), 0);
  char buf[512];
  ssize_t n = read(fd, buf, sizeof buf);  // an error reply, then the close
  EXPECT_GT(n, 16);
  EXPECT_EQ(std::string(buf, 4), "EAGV");
  close(fd);
  EXPECT_EQ(s.metric("eacgm_govern_protocol_errors_total"), 1);
  Subprocess p(hooked({s.env(), "EACGM_TENANT=small"}, "limits"));
  ASSERT_EQ(p.wait(), 0);
  EXPECT_EQ(values_of(p.out())["path_alloc"], "0,2,0,0");
}

TEST(GovernSched, ConfigReloadChangesLimits) {
  Scheduler s(kTwoTenants);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // a new mtime second
  s.write("[[tenant]]\nname = \"small\"\nrequest = 0.3\nmemory_limit = \"1GiB\"\n");
  ASSERT_TRUE(s.proc().wait_for("reloaded", true, std::chrono::milliseconds(5000))) << s.proc().err();
  Subprocess p(hooked({s.env(), "EACGM_TENANT=small"}, "limits"));
  ASSERT_EQ(p.wait(), 0);
  EXPECT_EQ(values_of(p.out())["path_alloc"], "0,0,0,0");
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  s.write("[[tenant]]\nname = \"small\"\nrequest = 7\n");
  ASSERT_TRUE(s.proc().wait_for("keeping the previous config", true, std::chrono::milliseconds(5000)));
  EXPECT_EQ(s.metric("eacgm_govern_config_reload_errors_total"), 1);
}

TEST(GovernSched, EacgmGovernStatusShowsTenants) {
  Scheduler s(kTwoTenants);
  Subprocess holder(
      hooked({s.env(), "EACGM_TENANT=small", "GOVERN_HOLD_MIB=48", "GOVERN_HOLD_SECONDS=3"}, "hold"));
  ASSERT_TRUE(holder.wait_for("hold_alloc=0")) << holder.err();
  Subprocess status({bin("eacgm"), "govern", "status", "--metrics", s.metrics_address()});
  ASSERT_EQ(status.wait(), 0) << status.err();
  std::string out = status.out();
  EXPECT_NE(out.find("TENANT"), std::string::npos) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(small +0 +30% +100% .* 48 MiB +64 MiB +1)"))) << out;
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(big +0 +70% +100% .* 0 B +none +0)"))) << out;
  Subprocess down({bin("eacgm"), "govern", "status", "--metrics", "127.0.0.1:1"});
  EXPECT_EQ(down.wait(), 1);
  EXPECT_NE(down.err().find("cannot reach eacgm-sched's metrics at 127.0.0.1:1"), std::string::npos)
      << down.err();
}

TEST(GovernSched, TcpClientsNeedTheTenantsSecret) {
  int tcp_port = 40000 + static_cast<int>(getpid() % 20000);
  std::string addr = "127.0.0.1:" + std::to_string(tcp_port);
  Scheduler s(
      "[[tenant]]\nname = \"remote\"\nrequest = 0.5\nmemory_limit = \"64MiB\"\nsecret = \"opensesame\"\n",
      "tcp = \"" + addr + "\"");
  Subprocess good(hooked(
      {"EACGM_SCHED_ADDR=" + addr, "EACGM_TENANT=remote", "EACGM_TENANT_SECRET=opensesame"}, "limits"));
  ASSERT_EQ(good.wait(), 0) << good.err();
  EXPECT_EQ(values_of(good.out())["path_alloc"], "0,2,0,0") << good.err() << s.proc().err();
  Subprocess bad(
      hooked({"EACGM_SCHED_ADDR=" + addr, "EACGM_TENANT=remote", "EACGM_TENANT_SECRET=guess"}, "limits"));
  ASSERT_EQ(bad.wait(), 0);
  EXPECT_NE(bad.err().find("refused this process"), std::string::npos) << bad.err();
  EXPECT_EQ(values_of(bad.out())["path_alloc"], "0,0,0,0") << "fails open: no tenant limit";
}

TEST(GovernSched, MetricsPassPromtool) {
  if (system("command -v promtool >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "promtool not installed (scripts/setup.sh)";
  Scheduler s(kTwoTenants);
  std::string file = s.dir() + "/metrics.txt";
  std::ofstream(file) << s.metrics();
  EXPECT_EQ(system(("promtool check metrics < " + file).c_str()), 0);
}

}  // namespace
