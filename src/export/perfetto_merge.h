// Several captures' Perfetto/Chrome JSON traces (export/capture_trace.h) merged into one
// timeline, as `eacgm capture --job` makes it of a job's ranks on several nodes: each
// part's processes and threads get ids of their own (a part's pids may repeat another's:
// two nodes), its processes are named by the part's label ("node-a/rank 0: python (pid
// 4242)") and sorted by the part's sort key (the rank), its times are moved by its node's
// clock offset onto one clock, and its flow ids are kept apart. A part that did not come
// (a node that did not answer) is a named process with one instant saying why, and is
// listed with the parts in the document's `eacgm_job_capture` object.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/result.h"

namespace eacgm::exporting {

struct TracePart {
  std::string label;           // "node-a/rank 0"
  std::string trace;           // one capture's document
  std::int64_t offset_ns = 0;  // added to every time: the common clock minus the part's
  long sort_key = 0;           // the parts' processes in this order (the rank)
  nlohmann::json about =
      nlohmann::json::object();  // said of the part in eacgm_job_capture (node, rank, pid...)
};

struct MissingPart {
  std::string label;
  std::string reason;  // one line: why it is not there
  long sort_key = 0;
  nlohmann::json about = nlohmann::json::object();
};

// One document of every part's events and the missing parts' instants, with
// `eacgm_job_capture` = `about` plus "parts" and "missing". A part whose trace is no
// capture document (not JSON, no traceEvents array, an event without a pid) is an error
// naming the part and what is wrong with it; with `refused` given, it is left out as a
// missing part instead (that error its reason) and added to `*refused`.
Result<std::string> merge_perfetto_traces(const std::vector<TracePart>& parts,
                                          const std::vector<MissingPart>& missing,
                                          const nlohmann::json& about,
                                          std::vector<MissingPart>* refused = nullptr);

}  // namespace eacgm::exporting
