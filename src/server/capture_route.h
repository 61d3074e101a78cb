// POST /api/v1/capture (docs/api.md): one process traced call by call for up to 60 s,
// answered with its Perfetto timeline (export/capture_trace.h). The process is named by
// `pid`, `comm` or `rank`, in a JSON body, a form body or the query string; or several
// processes by `pids` (a JSON array), captured over one window and answered as one
// document of their timelines.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/capture.h"
#include "core/result.h"
#include "sample/process_facts.h"
#include "server/http_server.h"
#include "server/snapshot_source.h"

namespace eacgm::server {

inline constexpr std::uint64_t kMaxCaptureSeconds = 60;

// What a request asks for, checked: exactly one selector, seconds in (0, 60].
struct CaptureAsk {
  std::optional<std::uint32_t> pid;
  std::optional<std::string> comm;
  std::optional<long> rank;
  // Or several processes over one window (a node's ranks of a job): each captured as
  // `pid` would be, answered together.
  std::vector<std::uint32_t> pids;
  double seconds = 0;
};

// The most processes one request captures together.
inline constexpr std::size_t kMaxCapturePids = 64;
// From the request's body (JSON object, or form fields) and query parameters; a
// message naming the field when one is wrong.
Result<CaptureAsk> parse_capture_ask(const Request& req);

struct CaptureRouteParts {
  std::shared_ptr<CaptureControl> control;
  std::shared_ptr<const SnapshotSource> source;       // the anomalies, the traced processes
  std::shared_ptr<const sample::ProcessFacts> facts;  // ranks, liveness
  std::shared_ptr<std::atomic<bool>> cancel;          // set when the daemon stops
  std::string proc_root = "/proc";
  // Captures running at once: each holds a worker for its window, so a few leave the
  // other workers to scrapes and API calls (503 beyond, Retry-After: 5).
  std::size_t max_running = 2;
};

// Adds the POST route.
void add_capture_route(HttpServer& http, CaptureRouteParts parts);

}  // namespace eacgm::server
