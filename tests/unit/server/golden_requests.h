// Test support: the requests the daemon's golden test makes, in order (the server's own
// request counters on /metrics depend on it), each with the file its answer is kept in
// under tests/unit/server/golden/, and how an answer is written there.
#pragma once

#include <regex>
#include <string>
#include <vector>

namespace eacgm::test {

struct GoldenRequest {
  std::string path;    // with its query string
  std::string accept;  // the Accept header, "" none
  std::string file;    // under golden/
};

inline const std::vector<GoldenRequest>& golden_requests() {
  static const std::vector<GoldenRequest> requests = {
      {"/metrics", "", "metrics.txt"},
      {"/metrics", "application/openmetrics-text;version=1.0.0", "metrics_openmetrics.txt"},
      {"/api/v1/gpus", "", "gpus.json"},
      {"/api/v1/functions", "", "functions.json"},
      {"/api/v1/counters", "", "counters.json"},
      {"/api/v1/memory", "", "memory.json"},
      {"/api/v1/kernels", "", "kernels.json"},
      {"/api/v1/nccl", "", "nccl.json"},
      {"/api/v1/gpu_time", "", "gpu_time.json"},
      {"/api/v1/processes", "", "processes.json"},
      {"/api/v1/anomalies", "", "anomalies.json"},
      {"/api/v1/inflight", "", "inflight.json"},
      {"/api/v1/python", "", "python.json"},
      {"/api/v1/python?pid=4190002", "", "python_pid.json"},
      {"/api/v1/python?pid=x", "", "python_bad_pid.json"},
      {"/api/v1/python/folded", "", "python_folded.txt"},
      {"/api/v1/python/folded?pid=4190001", "", "python_folded_pid.txt"},
      {"/api/v1/series", "", "series.json"},
      {"/api/v1/series?window=2", "", "series_window.json"},
      {"/api/v1/series?window=0", "", "series_bad_window.json"},
      {"/api/v1/stream?pid=5", "", "stream_bad.json"},
      {"/healthz", "", "healthz.txt"},
      {"/readyz", "", "readyz.txt"},
      {"/api/v1/nothing", "", "not_found.json"},
      {"/metrics", "", "metrics_again.txt"},
  };
  return requests;
}

// "STATUS CONTENT-TYPE\n" then the body; what no snapshot fixes reads "X": the agent's
// own CPU time and memory, the commit it was built from and the kernel it runs on.
inline std::string golden_text(int status, const std::string& content_type, const std::string& body) {
  static const std::regex own(R"(^(eacgm_agent_(?:cpu_seconds_total|resident_memory_bytes)) \S+$)",
                              std::regex::multiline);
  static const std::regex build(R"re(^(eacgm_build_info\{version="[^"]*",commit=)"[^"]*"(,kernel=)"[^"]*")re",
                                std::regex::multiline);
  return std::to_string(status) + " " + content_type + "\n" +
         std::regex_replace(std::regex_replace(body, own, "$1 X"), build, "$1\"X\"$2\"X\"");
}

}  // namespace eacgm::test
