// The configuration, store and window of a history command, checked before any query.
#include "cli/history_access.h"

#include <chrono>

#include "cli/trace_runner.h"
#include "history/history_window.h"

namespace eacgm::cli {

void add_history_access_options(CLI::App& sub, CommandContext& ctx, HistoryAccessFlags& flags,
                                const char* until_name) {
  sub.add_option("--config", ctx.config_path, "configuration file (TOML; [store] url and node)");
  sub.add_option("--store", flags.store,
                 "the store: sqlite:PATH or postgresql://... (default [store] url, "
                 "else sqlite:/var/lib/eacgm/eacgm.db)");
  sub.add_option("--node", flags.node, "only this node's rows (default: every node)");
  sub.add_option("--since", flags.since, "the window: the last 15m, 1h, 7d... (default 1h)");
  sub.add_option("--from", flags.from,
                 "the window's start: Unix seconds, an age (2h) or 2026-11-28T10:00:00Z");
  sub.add_option(until_name, flags.until, "the window's end (default now)");
}

std::optional<HistoryAccess> open_history_access(const CommandContext& ctx, const HistoryAccessFlags& flags) {
  auto config = node::load_config(ctx.config_path);
  if (!config) {
    print_error(config.error());
    return std::nullopt;
  }
  auto setup = history::resolve_history(config->store, flags.store, "");
  if (!setup) {
    print_error("--store: " + setup.error());
    return std::nullopt;
  }
  if (!*setup) {
    print_error("the history is off ([store] url = \"off\"); name a store with --store");
    return std::nullopt;
  }
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  history::WindowText text;
  if (!flags.since.empty()) text.since = flags.since;
  if (!flags.from.empty()) text.from = flags.from;
  if (!flags.until.empty()) text.until = flags.until;
  auto q = history::make_window(text, now);
  if (!q) {
    print_error(q.error());
    return std::nullopt;
  }
  if (!flags.node.empty()) q->node = flags.node;
  return HistoryAccess{std::move(config).value(), std::move(**setup), *q};
}

}  // namespace eacgm::cli
