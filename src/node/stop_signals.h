// The signals a foreground agent answers: SIGINT and SIGTERM stop it, SIGHUP reloads its
// configuration; SIGPIPE is ignored (a client gone mid-reply). The handlers only set flags
// that the agent's control loop reads.
#pragma once

#include <atomic>

namespace eacgm::node {

struct StopSignals {
  std::atomic<int>& stop;     // the signal that asked to stop, 0 before
  std::atomic<bool>& reload;  // set by SIGHUP; the agent clears it when it reloads
};

// Installs the handlers (once per process; again is harmless) and returns their flags.
StopSignals install_stop_signals();

}  // namespace eacgm::node
