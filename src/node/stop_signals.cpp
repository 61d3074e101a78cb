// Signal handlers that set the foreground agent's flags.
#include "node/stop_signals.h"

#include <signal.h>

namespace eacgm::node {
namespace {

std::atomic<int> g_stop{0};
std::atomic<bool> g_reload{false};

void on_stop(int sig) { g_stop.store(sig); }
void on_reload(int) { g_reload.store(true); }

}  // namespace

StopSignals install_stop_signals() {
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_stop;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sa.sa_handler = on_reload;
  sigaction(SIGHUP, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return StopSignals{g_stop, g_reload};
}

}  // namespace eacgm::node
