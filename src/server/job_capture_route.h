// POST /api/v1/capture/job (docs/api.md): what `eacgm capture --job J` does, for the web
// UI's job page: the job's ranks found in the fleet's store, captured on their nodes over
// one window through each node's agent (server/job_capture.h), answered with the merged
// Perfetto trace and what became of each node's ranks. One job capture at a time (503
// beyond, Retry-After: 5).
#pragma once

#include <memory>
#include <string>

#include "core/result.h"
#include "history/history_reader.h"
#include "server/http_server.h"

namespace eacgm::server {

struct JobCaptureAskBody {
  std::string job;
  double seconds = 5;
};

// From a JSON object body {"job": J, "seconds": S}: `job` a non-empty string of at most
// 256 characters, `seconds` more than 0 and at most 60 (default 5); a message naming the
// field when one is wrong.
Result<JobCaptureAskBody> parse_job_capture_ask(const Request& req);

struct JobCaptureRouteParts {
  std::shared_ptr<history::HistoryReader> fleet;  // where the agents and the job's processes are
  std::string token;                              // sent to the agents ("" none)
  double lookback_s = 900;                        // the job's processes seen this long back
};

void add_job_capture_route(HttpServer& http, JobCaptureRouteParts parts);

}  // namespace eacgm::server
