// JobStacks: the Python stacks of the ranks a job verdict names (analysis/job_verdict.h:
// the ranks in the open collective and the ones that never entered it), asked only when a
// reader asks (`GET /api/v1/inflight?stacks=1`, `eacgm job --stacks`). A rank of this node
// gets its stack from this agent's calls in flight; a rank of another node from that
// node's agent, found in the fleet store's `agents` and asked as server/peer_agent.h does:
// one request per node for all its ranks (`GET /api/v1/inflight/stacks?pids=`), the nodes
// asked at once, each within a short timeout. A node's answer is kept a few seconds, so a
// page polling the verdict asks each node once per interval whatever the number of
// readers. A node that does not answer is named with the reason, and its ranks' stacks
// are null with that reason: never an error of the whole answer.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "analysis/inflight_calls.h"
#include "core/result.h"
#include "export/json_opt.h"
#include "history/history_query.h"
#include "server/peer_agent.h"

namespace eacgm::server {

struct JobStackOptions {
  PeerCallOptions peer{.node = "", .token = "", .timeout = std::chrono::seconds(2)};  // per node
  std::chrono::milliseconds keep{5000};  // a node's answer reused this long
  std::size_t max_nodes = 64;            // nodes asked per call; the others named, not asked
  std::size_t max_pids = 256;            // ranks asked of one node
};

// The fleet store's agents (read once per call that must ask a node).
using AgentsReader = std::function<Result<history::AgentList>()>;

class JobStacks {
 public:
  JobStacks(JobStackOptions options, AgentsReader agents);

  // Each rank ({"node","pid",...}) of the verdicts' "in" and "missing" (job_comm_json
  // objects) gets "python_stack": its frames (innermost first) with "stack_call" (the call
  // it waits in) and "stack_tid", or null with "stack_error" (why none). Ranks of node
  // `self` come from `local` (nullptr: every node is asked, as from a command line);
  // with `ask_others` false the other nodes are not asked (a request from another agent).
  // Returns one entry per other node: {"node","agent" (null: none in the store),"pids",
  // "error" (null when it answered),"answer_age_ns" (how old the answer used is)}.
  exporting::json attach(const std::vector<exporting::json*>& verdicts, const std::string& self,
                         const analysis::InflightSummary* local, bool ask_others = true);

 private:
  struct NodeAnswer {
    std::chrono::steady_clock::time_point at;
    std::vector<std::uint32_t> pids;  // asked
    std::string agent;                // its URL, "" when none
    std::string error;                // "" when it answered
    std::map<std::uint32_t, exporting::json> stacks;
  };
  NodeAnswer ask(const std::string& node, const std::vector<std::uint32_t>& pids,
                 const Result<history::AgentList>& agents) const;

  JobStackOptions options_;
  AgentsReader agents_;
  std::mutex mutex_;  // held while nodes are asked: a second reader waits and reuses the answers
  std::map<std::string, NodeAnswer> answers_;
};

}  // namespace eacgm::server
