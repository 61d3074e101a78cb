// Test support for `eacgm serve` end to end: a fixture that starts the daemon against the
// fake NVML (tests/fakes/fake_nvml) and reads its /metrics, and Debian's real Prometheus
// started beside it, queried through its HTTP API.
#pragma once

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../unit/server/http_client.h"
#include "subprocess.h"

namespace eacgm::test {

inline const std::string kFakeNvml = EACGM_TEST_BIN_DIR "/fake_nvml/libnvidia-ml.so.1";

inline std::uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  (void)::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Polls `fn` until it returns true or the timeout passes.
template <typename Fn>
bool eventually(Fn fn, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fn()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return fn();
}

// The calls of one function in a history document's "functions" (0 when absent).
inline std::uint64_t calls_of(const nlohmann::json& doc, const std::string& function) {
  if (!doc.is_object() || !doc.contains("functions")) return 0;
  for (const auto& f : doc["functions"]) {
    if (f["function"] == function) return f["calls"].get<std::uint64_t>();
  }
  return 0;
}

// Every byte but letters and digits as %XX (a query-string value).
inline std::string url_encode(const std::string& s) {
  std::string q;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      q += c;
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", static_cast<unsigned char>(c));
      q += buf;
    }
  }
  return q;
}

// The body of a reply sent with `Transfer-Encoding: chunked` (as Prometheus sends large ones).
inline std::string dechunk(const std::string& body) {
  std::string out;
  std::size_t at = 0;
  while (at < body.size()) {
    const auto eol = body.find("\r\n", at);
    if (eol == std::string::npos) break;
    const std::size_t size = std::stoul(body.substr(at, eol - at), nullptr, 16);
    if (size == 0) break;
    out.append(body, eol + 2, size);
    at = eol + 2 + size + 2;
  }
  return out;
}

// A GET of Prometheus's HTTP API, its JSON answer (discarded when the reply is not JSON).
inline nlohmann::json prometheus_api(std::uint16_t port, const std::string& path) {
  const auto reply = server::testing::get(port, path);
  const std::string body = reply.header("Transfer-Encoding") == "chunked" ? dechunk(reply.body) : reply.body;
  return nlohmann::json::parse(body, nullptr, false);
}

// Debian's Prometheus (/usr/bin/prometheus) scraping the daemon on `target_port` (or
// each of `target_ports`) every second, with `rule_files` loaded (evaluated every second),
// on a port of its own; `extra_config` is appended to its configuration and `flags` to
// its command line.
class PrometheusServer {
 public:
  PrometheusServer(const std::string& dir, std::uint16_t target_port,
                   const std::vector<std::string>& rule_files = {}, const std::string& extra_config = "",
                   const std::vector<std::string>& flags = {})
      : PrometheusServer(dir, std::vector<std::uint16_t>{target_port}, rule_files, extra_config, flags) {}
  PrometheusServer(const std::string& dir, const std::vector<std::uint16_t>& target_ports,
                   const std::vector<std::string>& rule_files = {}, const std::string& extra_config = "",
                   const std::vector<std::string>& flags = {})
      : port_(free_port()) {
    std::ofstream config(dir + "/prometheus.yml");
    config << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
           << "scrape_configs:\n  - job_name: eacgm\n    static_configs:\n      - targets: [";
    for (std::size_t i = 0; i < target_ports.size(); ++i) {
      config << (i ? ", " : "") << "'127.0.0.1:" << target_ports[i] << "'";
    }
    config << "]\n";
    if (!rule_files.empty()) {
      config << "rule_files:\n";
      for (const auto& f : rule_files) config << "  - " << f << "\n";
    }
    config << extra_config;
    config.close();
    std::vector<std::string> argv{"/usr/bin/prometheus", "--config.file=" + dir + "/prometheus.yml",
                                  "--storage.tsdb.path=" + dir + "/prometheus",
                                  "--web.listen-address=127.0.0.1:" + std::to_string(port_)};
    argv.insert(argv.end(), flags.begin(), flags.end());
    process_ = std::make_unique<Subprocess>(argv, dir);
  }
  ~PrometheusServer() {
    process_->signal(SIGTERM);
    process_->wait();
  }
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  std::uint16_t port() const { return port_; }
  bool ready() const { return server::testing::get(port_, "/-/ready").status == 200; }
  // /api/v1/query of `expr` at the present time: {"status":..., "data":{"result":[...]}}.
  nlohmann::json query(const std::string& expr) const {
    return prometheus_api(port_, "/api/v1/query?query=" + url_encode(expr));
  }
  std::string log() const { return process_->err(); }

 private:
  std::uint16_t port_;
  std::unique_ptr<Subprocess> process_;
};

// `eacgm serve` on a free loopback port, its GPUs the fake NVML's ("full" scenario; GPU 0
// also lists the running processes named $EACGM_FAKE_NVML_GPU_COMM, cuda_calls unless a
// test says otherwise).
class ServeFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF uprobes)";
    setenv("EACGM_NVML_LIBRARY", kFakeNvml.c_str(), 1);
    setenv("EACGM_FAKE_NVML_SCENARIO", "full", 1);
    setenv("EACGM_FAKE_NVML_GPU_COMM", "cuda_calls", 1);
    dir_ = temp_dir();
    port_ = free_port();
  }
  void TearDown() override {
    unsetenv("EACGM_NVML_LIBRARY");
    unsetenv("EACGM_FAKE_NVML_SCENARIO");
    unsetenv("EACGM_FAKE_NVML_GPU_COMM");
  }
  std::string config(const std::string& text) {
    std::string path = dir_ + "/eacgm.toml";
    std::ofstream(path) << text;
    return path;
  }
  // Started and ready (its first snapshot published). Per call unless `mode` says
  // otherwise: the test program's runtime calls fail before reaching the driver here
  // (no GPU), so only per-call tracing sees them.
  std::unique_ptr<Subprocess> start_serve(const std::vector<std::string>& extra = {},
                                          const std::string& mode = "per-call") {
    std::vector<std::string> argv = {bin("eacgm"), "serve", "--listen", "127.0.0.1:" + std::to_string(port_),
                                     "--mode",     mode};
    argv.insert(argv.end(), extra.begin(), extra.end());
    // The history in the test's folder, not the machine's /var/lib/eacgm.
    if (std::find(argv.begin(), argv.end(), "--store") == argv.end()) {
      argv.insert(argv.end(), {"--store", "sqlite:" + dir_ + "/eacgm.db"});
    }
    auto p = std::make_unique<Subprocess>(argv, dir_);
    EXPECT_TRUE(p->wait_for("tracing all processes", true)) << p->err();
    EXPECT_TRUE(eventually([&] { return server::testing::get(port_, "/readyz").status == 200; })) << p->err();
    return p;
  }
  // The value of one series in /metrics ("" when absent).
  std::string metric(const std::string& series) {
    const std::string body = server::testing::get(port_, "/metrics").body;
    auto at = body.find("\n" + series + " ");
    if (at == std::string::npos) return "";
    auto start = at + series.size() + 2;
    return body.substr(start, body.find('\n', start) - start);
  }
  std::string dir_;
  std::uint16_t port_ = 0;
};

}  // namespace eacgm::test
