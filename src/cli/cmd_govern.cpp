// `eacgm govern status`: the governance scheduler's view (eacgm-sched's /metrics) as a
// table: each tenant's request, limit and share of each GPU's time over the window,
// tokens, waits, and memory against its limit.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>

#include "cli/commands.h"
#include "core/byte_size.h"
#include "core/result.h"
#include "core/unique_fd.h"

namespace eacgm::cli {
namespace {

Result<std::string> http_get_metrics(const std::string& host_port) {
  auto colon = host_port.rfind(':');
  if (colon == std::string::npos)
    return make_error(ErrorKind::kUsage, fmt::format("--metrics \"{}\" is not host:port", host_port));
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host_port.substr(0, colon).c_str(), host_port.substr(colon + 1).c_str(), &hints, &res);
  if (rc != 0) return make_error(fmt::format("cannot resolve {}: {}", host_port, gai_strerror(rc)));
  UniqueFd fd(socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  timeval tv{5, 0};
  if (fd) {
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }
  if (!fd || connect(fd.get(), res->ai_addr, res->ai_addrlen) != 0) {
    const int err = errno;
    freeaddrinfo(res);
    return make_errno_error(
        err, fmt::format("cannot reach eacgm-sched's metrics at {}: {} (is eacgm-sched running, with "
                         "metrics = \"{}\" in its config?)",
                         host_port, std::strerror(err), host_port));
  }
  freeaddrinfo(res);
  std::string req = "GET /metrics HTTP/1.0\r\nHost: " + host_port + "\r\n\r\n";
  std::string resp;
  if (send(fd.get(), req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
    char buf[8192];
    ssize_t n;
    while ((n = recv(fd.get(), buf, sizeof buf, 0)) > 0) resp.append(buf, static_cast<std::size_t>(n));
  }
  fd.reset();
  auto body = resp.find("\r\n\r\n");
  if (resp.rfind("HTTP/1.1 200", 0) != 0 || body == std::string::npos)
    return make_error(fmt::format("{} did not answer GET /metrics like eacgm-sched does", host_port));
  return resp.substr(body + 4);
}

// name{labels} value -> (name, labels map, value)
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

bool parse_sample(const std::string& line, Sample* s) {
  if (line.empty() || line[0] == '#') return false;
  auto brace = line.find('{');
  auto space = line.rfind(' ');
  if (space == std::string::npos) return false;
  s->labels.clear();
  if (brace != std::string::npos && brace < space) {
    s->name = line.substr(0, brace);
    auto close_brace = line.find('}', brace);
    std::string labels = line.substr(brace + 1, close_brace - brace - 1);
    std::size_t pos = 0;
    while (pos < labels.size()) {
      auto eq = labels.find('=', pos);
      auto q2 = labels.find('"', eq + 2);
      if (eq == std::string::npos || q2 == std::string::npos) break;
      s->labels[labels.substr(pos, eq - pos)] = labels.substr(eq + 2, q2 - eq - 2);
      pos = q2 + 2;
    }
  } else {
    s->name = line.substr(0, space);
  }
  s->value = std::strtod(line.c_str() + space + 1, nullptr);
  return true;
}

struct Row {
  double request = 0, limit = 0, usage = 0, gpu_time = 0, tokens = 0, wait = 0, waiting = 0, held = 0;
  double memory_used = 0, memory_limit = 0, clients = 0;
};

int status(const std::string& metrics_addr) {
  auto text = http_get_metrics(metrics_addr);
  if (!text) {
    std::fprintf(stderr, "eacgm govern status: %s\n", text.error().c_str());
    return text.error_kind() == ErrorKind::kUsage ? 2 : 1;
  }
  std::map<std::pair<std::string, std::string>, Row> rows;  // (tenant, gpu)
  std::map<std::string, Row> per_tenant;
  double errors = 0, refused = 0;
  std::istringstream in(*text);
  std::string line;
  Sample s;
  while (std::getline(in, line)) {
    if (!parse_sample(line, &s)) continue;
    const std::string& t = s.labels["tenant"];
    auto gpu = s.labels.find("gpu");
    Row& r = gpu != s.labels.end() ? rows[{t, gpu->second}] : per_tenant[t];
    if (s.name == "eacgm_govern_tenant_request_ratio") r.request = s.value;
    if (s.name == "eacgm_govern_tenant_limit_ratio") r.limit = s.value;
    if (s.name == "eacgm_govern_tenant_usage_ratio") r.usage = s.value;
    if (s.name == "eacgm_govern_tenant_gpu_time_seconds_total") r.gpu_time = s.value;
    if (s.name == "eacgm_govern_tenant_tokens_total") r.tokens = s.value;
    if (s.name == "eacgm_govern_tenant_token_wait_seconds_total") r.wait = s.value;
    if (s.name == "eacgm_govern_tenant_waiting_clients") r.waiting = s.value;
    if (s.name == "eacgm_govern_tenant_token_held") r.held = s.value;
    if (s.name == "eacgm_govern_tenant_memory_used_bytes") r.memory_used = s.value;
    if (s.name == "eacgm_govern_tenant_memory_limit_bytes") r.memory_limit = s.value;
    if (s.name == "eacgm_govern_tenant_clients") r.clients = s.value;
    if (s.name == "eacgm_govern_protocol_errors_total") errors = s.value;
    if (s.name == "eacgm_govern_refused_clients_total") refused = s.value;
  }
  if (rows.empty()) {
    std::printf("eacgm-sched at %s has no tenants\n", metrics_addr.c_str());
    return 0;
  }
  std::printf("%-16s %3s %7s %7s %7s %10s %7s %9s %5s %4s %12s %12s %7s\n", "TENANT", "GPU", "REQUEST",
              "LIMIT", "USAGE", "GPU-TIME", "TOKENS", "WAITED", "WAIT", "HOLD", "MEMORY", "MEM-LIMIT",
              "CLIENTS");
  for (const auto& [key, r] : rows) {
    const Row& t = per_tenant[key.first];
    std::string limit =
        t.memory_limit > 0 ? format_byte_size(static_cast<std::uint64_t>(t.memory_limit)) : "none";
    std::printf("%-16s %3s %6.0f%% %6.0f%% %6.1f%% %9.1fs %7.0f %8.1fs %5.0f %4s %12s %12s %7.0f\n",
                key.first.c_str(), key.second.c_str(), 100 * t.request, 100 * t.limit, 100 * r.usage,
                r.gpu_time, r.tokens, r.wait, r.waiting, r.held > 0 ? "yes" : "",
                format_byte_size(static_cast<std::uint64_t>(r.memory_used)).c_str(), limit.c_str(),
                t.clients);
  }
  if (errors > 0 || refused > 0)
    std::printf("protocol errors: %.0f, refused clients: %.0f\n", errors, refused);
  return 0;
}

}  // namespace

void add_govern_command(CLI::App& app, CommandContext& ctx) {
  auto* govern =
      app.add_subcommand("govern", "GPU sharing: the governance scheduler (eacgm-sched) and its tenants");
  govern->require_subcommand(1);
  // A word that is not a subcommand is named as such (not "a subcommand is required").
  govern->add_option("subcommand", "status")
      ->check(CLI::Validator(
          [](std::string& word) { return fmt::format("unknown subcommand \"{}\" (there is: status)", word); },
          "", "subcommand"));
  auto* st =
      govern->add_subcommand("status", "each tenant's GPU-time share, tokens, waits and memory, per GPU");
  auto addr = std::make_shared<std::string>("127.0.0.1:9477");
  st->add_option("--metrics", *addr, "eacgm-sched's metrics address (host:port, its config's `metrics`)")
      ->capture_default_str();
  st->callback([&ctx, addr] { ctx.exit_code = status(*addr); });
}

}  // namespace eacgm::cli
