// `eacgm serve`'s one call: the node agent in the foreground until SIGINT or SIGTERM
// (SIGHUP reloads the configuration), its start-up lines and errors through the options'
// notice.
#pragma once

#include "node/node_agent.h"

namespace eacgm::node {

// Returns the exit code: 0 after a stop, 2 when the agent cannot start (a bad
// configuration, listen address, store or token file), else the trace's failure's.
int serve(NodeOptions options);

}  // namespace eacgm::node
