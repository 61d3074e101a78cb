// Daemon: everything `eacgm serve` answers over HTTP, as one object: /metrics, /healthz,
// /readyz, the /api/v1 routes over a snapshot source and the live stream. Whoever runs
// the trace feeds stream() beside the source's analysis; the daemon itself never
// touches the trace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/capture.h"
#include "core/consumer.h"
#include "core/result.h"
#include "history/history_reader.h"
#include "history/history_writer.h"
#include "sample/process_facts.h"
#include "server/http_server.h"
#include "server/serve_config.h"
#include "server/snapshot_source.h"

namespace eacgm::server {

struct DaemonOptions {
  ListenAddress listen;
  std::string token_file;  // "" none (then only loopback is allowed)
  ServeConfig serve;       // caps, dcgm_metrics, max_clients
  std::shared_ptr<const SnapshotSource> source;
  std::shared_ptr<const sample::ProcessFacts> facts;  // null: /proc (sample::ProcFacts)
  // The kubelet's view (pods holding GPUs); null: none. `pod_series`: [kubernetes]
  // process_series is "auto" (server/metrics_route.h).
  std::shared_ptr<sample::PodDirectory> pods;
  bool pod_series = true;
  std::string hostname;                       // the GPU families' label; "" the host's name
  double start_time_seconds = 0;              // Unix time the agent started; 0: now
  std::function<std::string()> mode;          // the trace mode now, for eacgm_build_info
  std::function<void(std::string_view)> log;  // the server's notices (bad requests, once per kind)
  // The history store: /api/v1/history/* read it (404 while null); eacgm_store_* on
  // /metrics come from the writer's counters (absent while null).
  std::shared_ptr<history::HistoryReader> history;
  std::function<history::StoreStats()> store_stats;
  // The fleet's store, where the agents' rows are (GET /api/v1/history/agents; null: the
  // history's store).
  std::shared_ptr<history::HistoryReader> fleet_history;
  // The history's node ("" none): a history request naming another node whose rows
  // neither store keeps at the window's tier goes to that node's agent, listed in the
  // fleet's store, with this agent's token (server/history_forward.h).
  std::string history_node;
  history::ReportOptions report;  // /api/v1/history/report's price and idle threshold
  // On-demand captures (POST /api/v1/capture; 404 while null).
  std::shared_ptr<CaptureControl> capture;
};

class Daemon {
 public:
  explicit Daemon(DaemonOptions options);
  ~Daemon();  // stop()
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  // Binds and serves on threads of its own. Fails with one line for the user (a token
  // file that is not private, a non-loopback address without one, a port in use).
  Status start();
  // Ends the streams and stops serving; idempotent.
  void stop();
  std::uint16_t port() const;

  // The live stream's producer (server/summary_stream.h): a consumer for the trace.
  std::shared_ptr<Consumer> stream() const;

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

// Event-stream clients allowed with `max_clients` workers: half of them, at most 4
// (a stream holds a worker for its life; the other half serve scrapes and API calls).
std::size_t sse_clients_for(std::size_t max_clients);

// Captures allowed to run at once with `max_clients` workers: a quarter of them, at
// least one (a capture holds a worker for its window). With the streams' half, a quarter
// of the workers is always left to scrapes and API calls (from 4 workers on).
std::size_t captures_for(std::size_t max_clients);

// This machine's host name, or "" when it cannot be read.
std::string host_name();

}  // namespace eacgm::server
