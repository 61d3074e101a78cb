// eacgm-sched: the governance scheduler daemon (docs/governance.md). Reads the tenants
// from a TOML file, serves time tokens and memory accounts to libeacgm_hook.so, and
// exports Prometheus metrics.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "govern/sched/sched_server.h"
#include "govern/sched/tenant_config.h"

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) { g_stop.store(true); }

int usage() {
  std::fputs(
      "usage: eacgm-sched --config FILE [--check]\n"
      "  --config FILE  tenants, shares and limits (TOML; re-read when it changes)\n"
      "  --check        validate FILE and exit (0: valid)\n",
      stderr);
  return 2;
}

int run(int argc, char** argv) {
  std::string path;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
      path = argv[++i];
    } else if (std::strcmp(argv[i], "--check") == 0) {
      check = true;
    } else {
      return usage();
    }
  }
  if (path.empty()) return usage();
  auto cfg = eacgm::govern::sched::load_scheduler_config(path);
  if (!cfg) {
    std::fprintf(stderr, "eacgm-sched: %s\n", cfg.error().c_str());
    return 2;
  }
  if (check) {
    std::printf("%s: valid (%zu tenants, %d GPUs)\n", path.c_str(), cfg->tenants.size(), cfg->gpus);
    return 0;
  }
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  auto server = eacgm::govern::sched::SchedServer::start(*cfg, path);
  if (!server) {
    std::fprintf(stderr, "eacgm-sched: %s\n", server.error().c_str());
    return 1;
  }
  std::fprintf(stderr, "eacgm-sched: serving %d GPU(s) for %zu tenant(s) on %s%s%s%s%s\n", cfg->gpus,
               cfg->tenants.size(), cfg->socket.c_str(), cfg->tcp.empty() ? "" : " and tcp ",
               cfg->tcp.c_str(), cfg->metrics.empty() ? "" : "; metrics on ", cfg->metrics.c_str());
  (*server)->run(g_stop);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "eacgm-sched: internal error: %s\n", e.what());
  }
  return 70;
}
