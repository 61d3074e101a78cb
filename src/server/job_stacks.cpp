// The Python stacks of a job verdict's ranks, this node's and the other nodes' agents'
// (server/job_stacks.h).
#include "server/job_stacks.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <thread>
#include <utility>

#include "export/inflight_json.h"

namespace eacgm::server {
namespace {

using exporting::json;

// A rank of a verdict, where its stack goes.
struct RankRef {
  json* rank;
  std::string node;
  std::uint32_t pid;
};

std::vector<RankRef> ranks_of(const std::vector<json*>& verdicts) {
  std::vector<RankRef> out;
  for (json* v : verdicts) {
    for (const char* list : {"in", "missing"}) {
      if (!v->contains(list)) continue;
      for (json& r : (*v)[list]) {
        if (!r.is_object() || !r.contains("node") || !r.contains("pid")) continue;
        out.push_back(RankRef{&r, r["node"].get<std::string>(), r["pid"].get<std::uint32_t>()});
      }
    }
  }
  return out;
}

// Each stack of an inflight_stacks_json list by pid.
std::map<std::uint32_t, json> by_pid(const json& stacks) {
  std::map<std::uint32_t, json> out;
  for (const auto& s : stacks) out.emplace(s["pid"].get<std::uint32_t>(), s);
  return out;
}

void put_stack(json& rank, const json& stack) {
  rank["python_stack"] = stack["python_stack"];
  rank["stack_call"] = stack["name"];
  rank["stack_tid"] = stack["tid"];
}

void put_none(json& rank, const std::string& why) {
  rank["python_stack"] = nullptr;
  rank["stack_error"] = why;
}

std::string no_stack(const std::string& node, std::uint32_t pid) {
  return fmt::format(
      "node {} has no Python stack of pid {}: it waits in no traced call of at least [hangs] min_age_s, or "
      "is not a Python process the agent's sampler reads",
      node, pid);
}

}  // namespace

JobStacks::JobStacks(JobStackOptions options, AgentsReader agents)
    : options_(std::move(options)), agents_(std::move(agents)) {}

JobStacks::NodeAnswer JobStacks::ask(const std::string& node, const std::vector<std::uint32_t>& pids,
                                     const Result<history::AgentList>& agents) const {
  NodeAnswer out;
  out.at = std::chrono::steady_clock::now();
  out.pids = pids;
  if (!agents) {
    out.error =
        fmt::format("node {}'s agent: reading the fleet store's agents failed: {}", node, agents.error());
    return out;
  }
  const auto row = std::find_if(agents->rows.begin(), agents->rows.end(),
                                [&](const history::StoredAgent& a) { return a.node == node; });
  if (row == agents->rows.end()) {
    out.error = fmt::format("node {} has no agent in the fleet store (its agent writes its URL there)", node);
    return out;
  }
  out.agent = row->url;
  std::string list;
  for (const std::uint32_t pid : pids) list += (list.empty() ? "" : ",") + std::to_string(pid);
  PeerAnswer answer = ask_peer(options_.peer, *row, last_seen_text(*agents, *row), "/api/v1/inflight/stacks",
                               {{"pids", list}});
  if (!answer.ok()) {
    out.error = std::move(answer.error);
    return out;
  }
  const nlohmann::json& doc = *answer.doc;
  const auto stacks = doc.find("stacks");
  if (stacks == doc.end() || !stacks->is_array()) {
    out.error = fmt::format("node {}'s agent at {} answered without a list of stacks", node, row->url);
    return out;
  }
  for (const auto& s : *stacks) {
    if (!s.is_object() || !s.contains("pid") || !s["pid"].is_number_unsigned() || !s.contains("python_stack"))
      continue;
    out.stacks.emplace(s["pid"].get<std::uint32_t>(), json::parse(s.dump()));
  }
  return out;
}

json JobStacks::attach(const std::vector<json*>& verdicts, const std::string& self,
                       const analysis::InflightSummary* local, bool ask_others) {
  const std::vector<RankRef> ranks = ranks_of(verdicts);
  // This node's ranks: from the calls in flight here.
  if (local != nullptr) {
    std::vector<std::uint32_t> pids;
    for (const auto& r : ranks) {
      if (r.node == self) pids.push_back(r.pid);
    }
    const auto mine = by_pid(exporting::inflight_stacks_json(*local, pids));
    for (const auto& r : ranks) {
      if (r.node != self) continue;
      if (auto it = mine.find(r.pid); it != mine.end()) {
        put_stack(*r.rank, it->second);
      } else {
        put_none(*r.rank, no_stack(r.node, r.pid));
      }
    }
  }
  // The other nodes' pids, each node's asked once.
  std::map<std::string, std::vector<std::uint32_t>> wanted;  // read only once the nodes are asked
  for (const auto& r : ranks) {
    if (local != nullptr && r.node == self) continue;
    auto& pids = wanted[r.node];
    if (std::find(pids.begin(), pids.end(), r.pid) == pids.end() && pids.size() < options_.max_pids)
      pids.push_back(r.pid);
  }
  std::unique_lock lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  std::map<std::string, NodeAnswer> asked;
  std::vector<std::string> skipped;  // past max_nodes
  {
    std::vector<std::string> to_ask;
    for (const auto& [node, pids] : wanted) {
      auto cached = answers_.find(node);
      const bool fresh = cached != answers_.end() && now - cached->second.at < options_.keep &&
                         std::all_of(pids.begin(), pids.end(), [&](std::uint32_t p) {
                           const auto& had = cached->second.pids;
                           return std::find(had.begin(), had.end(), p) != had.end();
                         });
      if (fresh || !ask_others) continue;
      if (to_ask.size() == options_.max_nodes) {
        skipped.push_back(node);
      } else {
        to_ask.push_back(node);
      }
    }
    if (!to_ask.empty()) {
      const Result<history::AgentList> agents = agents_();
      std::vector<NodeAnswer> got(to_ask.size());
      {
        std::vector<std::jthread> threads;
        threads.reserve(to_ask.size());
        for (std::size_t i = 0; i < to_ask.size(); ++i) {
          threads.emplace_back([&, i] { got[i] = ask(to_ask[i], wanted.at(to_ask[i]), agents); });
        }
      }
      for (std::size_t i = 0; i < to_ask.size(); ++i) answers_[to_ask[i]] = std::move(got[i]);
    }
  }
  const auto done = std::chrono::steady_clock::now();
  // Forget the answers past their time that no node asked now.
  std::erase_if(answers_, [&](const auto& a) {
    return !wanted.contains(a.first) && done - a.second.at >= options_.keep;
  });
  json nodes = json::array();
  for (const auto& [node, pids] : wanted) {
    const auto it = answers_.find(node);
    const bool skip = std::find(skipped.begin(), skipped.end(), node) != skipped.end();
    std::string error;
    if (!ask_others) {
      error = fmt::format("node {} not asked: this request came from another agent", node);
    } else if (skip || it == answers_.end()) {
      error = fmt::format("node {} not asked: more than {} nodes to ask", node, options_.max_nodes);
    } else {
      error = it->second.error;
    }
    const bool answered = error.empty() && it != answers_.end();
    for (const auto& r : ranks) {
      if (r.node != node || (local != nullptr && r.node == self)) continue;
      if (!answered) {
        put_none(*r.rank, error);
      } else if (auto s = it->second.stacks.find(r.pid); s != it->second.stacks.end()) {
        put_stack(*r.rank, s->second);
      } else {
        put_none(*r.rank, no_stack(node, r.pid));
      }
    }
    json entry{{"node", node}, {"pids", pids}};
    entry["agent"] =
        it != answers_.end() && !it->second.agent.empty() ? json(it->second.agent) : json(nullptr);
    entry["error"] = error.empty() ? json(nullptr) : json(error);
    entry["answer_age_ns"] =
        it != answers_.end() && ask_others && !skip
            ? json(std::chrono::duration_cast<std::chrono::nanoseconds>(done - it->second.at).count())
            : json(nullptr);
    nodes.push_back(std::move(entry));
  }
  return nodes;
}

}  // namespace eacgm::server
