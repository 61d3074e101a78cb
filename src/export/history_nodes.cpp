// Nodes gathered from the history's processes (see history_nodes.h).
#include "export/history_nodes.h"

#include <algorithm>
#include <map>
#include <set>

namespace eacgm::exporting {

std::vector<HistoryNode> history_nodes(const std::vector<history::StoredProcess>& processes) {
  struct Acc {
    HistoryNode node;
    std::set<std::string> jobs;
  };
  std::map<std::string, Acc> by_node;
  for (const auto& p : processes) {
    const auto& r = p.record;
    Acc& a = by_node[p.node];
    HistoryNode& n = a.node;
    if (n.processes == 0) {
      n.node = p.node;
      n.first_ns = r.first_ns;
      n.last_ns = r.last_ns;
    }
    ++n.processes;
    if (!r.exited) ++n.running;
    n.calls += p.calls;
    n.errors += p.errors;
    n.first_ns = std::min(n.first_ns, r.first_ns);
    n.last_ns = std::max(n.last_ns, r.last_ns);
    if (!r.job.empty()) a.jobs.insert(r.job);
  }
  std::vector<HistoryNode> out;
  out.reserve(by_node.size());
  for (auto& [name, a] : by_node) {
    a.node.jobs = a.jobs.size();
    out.push_back(std::move(a.node));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const HistoryNode& a, const HistoryNode& b) { return a.calls > b.calls; });
  return out;
}

nlohmann::ordered_json history_nodes_array(const std::vector<HistoryNode>& nodes) {
  auto out = nlohmann::ordered_json::array();
  for (const auto& n : nodes) {
    out.push_back({{"node", n.node},
                   {"processes", n.processes},
                   {"running", n.running},
                   {"jobs", n.jobs},
                   {"calls", n.calls},
                   {"errors", n.errors},
                   {"first_ns", n.first_ns},
                   {"last_ns", n.last_ns}});
  }
  return out;
}

}  // namespace eacgm::exporting
