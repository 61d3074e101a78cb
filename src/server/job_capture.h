// JobCapture: the same window captured on every node that holds a rank of a job, through
// each node's agent as the fleet's store lists it (history/job_ranks.h), merged into one
// Perfetto timeline on the store's clock (export/perfetto_merge.h). One request per node
// for all its ranks (`POST /api/v1/capture` with "pids": one window, one of the agent's
// capture slots), every node's at once so the windows coincide. `eacgm capture --job`
// and `POST /api/v1/capture/job` (the web UI's job page) both run it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "history/job_ranks.h"

namespace eacgm::server {

struct JobCaptureAsk {
  std::string job;
  double seconds = 5;
  std::string token;        // the agents' bearer token ("" none)
  double lookback_s = 900;  // the places are of the processes seen this long back (said when none)
};

// One rank of the job and what became of it.
struct JobRankCapture {
  std::string node;
  std::string agent;  // its agent's URL ("" when the store lists none)
  history::JobRankPlace place;
  std::string label;  // "node-a/rank 0", "node-a/pid 4242"
  std::string error;  // "" when captured
};

struct JobCaptureResult {
  std::vector<JobRankCapture> ranks;  // every rank, by node then rank
  std::vector<std::string> nodes;     // the job's nodes, in the ranks' order
  std::size_t captured = 0;
  // Each rank not captured, one line each, in the order found ("node-b/rank 3 (pid 5121)
  // not captured: ...").
  std::vector<std::string> notes;
  std::string trace;  // the merged trace; "" when `error` says why there is none
  std::string error;
  bool none_running = false;  // the error: no running process of the job in the store
};

// Captures the ranks of `places` (read from the store named `store_name`, redacted) over
// `ask.seconds`; blocks for the window plus the agents' answers.
JobCaptureResult capture_job(const history::JobPlaces& places, const std::string& store_name,
                             const JobCaptureAsk& ask);

}  // namespace eacgm::server
