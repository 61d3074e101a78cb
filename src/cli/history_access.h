// What the commands over the history (`history`, `report`) share: the configuration
// file, the store it or --store names, and the window of --since, --from and --until.
#pragma once

#include <optional>
#include <string>

#include "cli/commands.h"
#include "history/history_query.h"
#include "history/history_setup.h"
#include "node/node_config.h"

namespace eacgm::cli {

struct HistoryAccessFlags {
  std::string store, node, since, from, until;
};

struct HistoryAccess {
  node::NodeConfig config;
  history::HistorySetup setup;
  history::HistoryQuery query;  // the window, and --node
};

// The --config, --store and window options of a history command.
void add_history_access_options(CLI::App& sub, CommandContext& ctx, HistoryAccessFlags& flags,
                                const char* until_name);

// The configuration, the store and the window; none after printing why (a usage
// error: exit 2).
std::optional<HistoryAccess> open_history_access(const CommandContext& ctx, const HistoryAccessFlags& flags);

}  // namespace eacgm::cli
