// The foreground node agent: start, say where it serves, run until a signal.
#include "node/serve.h"

#include "node/memory_trim.h"
#include "node/stop_signals.h"

namespace eacgm::node {

int serve(NodeOptions options) {
  auto notice = options.notice ? options.notice : [](const std::string&) {};
  const bool trims = options.trim_memory;
  auto agent = NodeAgent::create(std::move(options));
  if (!agent) {
    notice(agent.error());
    return 2;
  }
  notice("serving on " + (*agent)->url() + " (/metrics, /api/v1/..., /api/v1/stream)");
  notice("web UI: " + (*agent)->url() + "/");
  if (const std::string line = (*agent)->history_line(); !line.empty()) notice(line);
  if (trims) {
    notice(MemoryTrim::jemalloc()
               ? std::string("memory: jemalloc (a page freed whole goes back after its decay)")
               : "memory: glibc, free pages handed back every " +
                     std::to_string(MemoryTrim::kPeriod.count()) + " s");
  }
  const StopSignals signals = install_stop_signals();
  const int code = (*agent)->run(signals.stop, signals.reload);
  if (code == 0) notice("stopped");
  return code;
}

}  // namespace eacgm::node
