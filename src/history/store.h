// Store: where the history is kept (SQLite on the node, PostgreSQL for a fleet). The
// writer thread writes one batch per interval and maintains the store (rollups,
// retention, the size cap); readers query windows (history_reader.h). A Store is one
// connection, used from one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "analysis/job_verdict.h"
#include "core/result.h"
#include "history/clock_offset.h"
#include "history/history_batch.h"
#include "history/history_query.h"
#include "history/job_report.h"
#include "history/schema.h"

namespace eacgm::history {

// How long each tier keeps its rows, and the cap on the store's size.
struct Retention {
  std::int64_t raw_ns = 24LL * 3600 * 1'000'000'000;         // the writer's intervals
  std::int64_t minute_ns = 7LL * 24 * 3600 * 1'000'000'000;  // 1-minute rollups
  std::int64_t hour_ns = 90LL * 24 * 3600 * 1'000'000'000;   // 1-hour rollups (and events)
  std::uint64_t max_bytes = std::uint64_t{1} << 30;          // 0: no cap
};

class Store {
 public:
  virtual ~Store() = default;
  // One interval's rows, in one transaction.
  virtual Status write(const std::string& node, const IntervalBatch& batch) = 0;
  // Rolls complete minutes and hours up, deletes what is past retention, enforces the
  // size cap. `now_ns` is the writer's clock (tests simulate it).
  virtual Status maintain(const std::string& node, std::int64_t now_ns, const Retention& retention) = 0;

  // The tier a window is answered from: the finest whose retention covers `from_ns`.
  virtual Tier tier_for(const HistoryQuery& q, std::int64_t now_ns, const Retention& retention) const;
  // The lists that grow with the processes come a page at a time (q.offset, q.limit)
  // with the window's count: processes and jobs most calls first, nodes likewise,
  // anomalies oldest first, leaks largest first.
  virtual Result<ProcessPage> processes(const HistoryQuery& q, Tier tier) = 0;
  virtual Result<Page<StoredJob>> jobs(const HistoryQuery& q, Tier tier) = 0;
  virtual Result<Page<StoredNode>> nodes(const HistoryQuery& q, Tier tier) = 0;
  virtual Result<std::vector<StoredFunction>> functions(const HistoryQuery& q, Tier tier) = 0;
  virtual Result<std::vector<StoredKernel>> kernels(const HistoryQuery& q, Tier tier) = 0;
  virtual Result<std::vector<StoredGpuPoint>> gpus(const HistoryQuery& q, Tier tier) = 0;
  // The selected jobs' processes on GPUs, one row per process, GPU and interval of the
  // window (job_report.h sums them up).
  virtual Result<std::vector<HeldGpuRow>> held_gpus(const HistoryQuery& q, const JobSelector& selector,
                                                    Tier tier) = 0;
  // Where those jobs' time went: their processes alive in the window, and their rows of
  // waits and GPU time (add_job_times sums them up).
  virtual Result<JobTimeRows> job_time_rows(const HistoryQuery& q, const JobSelector& selector,
                                            Tier tier) = 0;
  virtual Result<Page<StoredAnomaly>> anomalies(const HistoryQuery& q) = 0;
  virtual Result<Page<StoredLeak>> leaks(const HistoryQuery& q) = 0;
  // Where the node's NCCL ranks stand (schema version 9, nccl_standings): `rows` replace
  // the node's rows, each written at `written_ns` (the store's clock), in one transaction.
  virtual Status write_standings(const std::string& node, std::span<const analysis::RankReport> rows,
                                 std::int64_t written_ns);
  // Every node's rows of the communicators `comm_ids` (all when empty) written at
  // `since_ns` or later, at most `limit`, the newest first.
  virtual Result<std::vector<analysis::RankReport>> standings(std::span<const std::uint64_t> comm_ids,
                                                              std::int64_t since_ns, std::size_t limit);
  // maintain() deletes the rows of nccl_standings written longer ago than this (agents
  // that stopped writing).
  static constexpr std::int64_t kStandingsKeptNs = 600'000'000'000;
  // The node's agent (schema version 10, agents), written over its row. `agent`'s times
  // are on the node's clock: the store writes them on its own (PostgreSQL measures the
  // server's against the node's in this call, so clock() is fresh after it).
  virtual Status put_agent(const StoredAgent& agent);
  // Every node's agent, by node, with the store's clock now.
  virtual Result<AgentList> agents();
  // Every node's clock against the store's, by node (none in a store on one clock).
  virtual Result<std::vector<NodeClock>> node_clocks();

  // What the store keeps of `node` (history_query.h's NodeKeeping), from its marks.
  virtual Result<NodeKeeping> node_keeping(const std::string& node);

  // The node's clock against the store's (PostgreSQL: the server's), as of the last
  // write; none for a store on the node's own clock (SQLite) or before a write.
  virtual std::optional<ClockEstimate> clock() const { return std::nullopt; }
  // Bytes on disk (SQLite: the file's pages).
  virtual Result<std::uint64_t> size_bytes() = 0;
  // For messages: the URL with any password hidden.
  virtual std::string description() const = 0;
};

// What a connection is opened for: the writer makes the store when it is not there
// (SQLite: the file and its directory; PostgreSQL: the schema); a reader never does.
enum class StoreAccess { kWrite, kRead };

// Opens the store a URL names: `sqlite:PATH` or `postgresql://...`. Errors name the URL
// without its password; a store a reader finds missing is "cannot open store URL (no
// such file)" (SQLite) or "... holds no history" (PostgreSQL).
Result<std::unique_ptr<Store>> open_store(const std::string& url, StoreAccess access = StoreAccess::kWrite);

}  // namespace eacgm::history
