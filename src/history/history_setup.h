// What `serve` keeps, from [store] and its flags: the URL (default the node's SQLite
// file; "off" none), the node's name (default the host name), the interval, retention
// and the spool; and the writer made from them.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "history/history_writer.h"
#include "history/store_config.h"
#include "sample/process_facts.h"

namespace eacgm::history {

struct HistorySetup {
  std::string url;
  bool url_given = false;  // named by --store or [store] url (else the default)
  HistoryOptions options;
  double idle_threshold = 0.05;  // [report]: a pass's activity under it is idle
};

// nullopt: no history ("off"). `flag_url` and `flag_node` override the config ("" not given).
Result<std::optional<HistorySetup>> resolve_history(const StoreConfig& config, const std::string& flag_url,
                                                    const std::string& flag_node);
Retention retention_of(const StoreConfig& config);
std::string host_name();

// Opens the store and makes the writer over `source` (not started).
// `facts`: the processes' ranks, command lines and workloads (null: a ProcFacts of its own).
Result<std::shared_ptr<HistoryWriter>> make_history_writer(
    const HistorySetup& setup, HistoryWriter::Source source, HistoryWriter::Log log,
    std::shared_ptr<const sample::ProcessFacts> facts = nullptr);

}  // namespace eacgm::history
