// The agents list as JSON and as a table (export/agent_list.h).
#include "export/agent_list.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

namespace eacgm::exporting {
namespace {

using json = nlohmann::json;

std::string utc(std::int64_t ns) {
  const auto s = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

}  // namespace

std::string agents_json(const history::AgentList& list, const std::string& store) {
  json agents = json::array();
  for (const history::StoredAgent& a : list.rows) {
    const bool up = history::agent_up(a, list.now_ns);
    agents.push_back(json{{"node", a.node},
                          {"url", a.url},
                          {"version", a.version},
                          {"started_ns", a.started_ns},
                          {"last_seen_ns", a.last_seen_ns},
                          {"heartbeat_s", static_cast<double>(a.every_ns) / 1e9},
                          {"up", up},
                          {"down_since_ns", up ? json(nullptr) : json(a.last_seen_ns)}});
  }
  return json{{"store", store}, {"now_ns", list.now_ns}, {"agents", std::move(agents)}}.dump();
}

std::string render_agents_text(const history::AgentList& list, const std::string& store) {
  std::string out = fmt::format("agents in {}: {}\n", store, list.rows.size());
  if (list.rows.empty()) return out;
  std::size_t node_w = 4, url_w = 3, version_w = 7;
  for (const history::StoredAgent& a : list.rows) {
    node_w = std::max(node_w, a.node.size());
    url_w = std::max(url_w, a.url.size());
    version_w = std::max(version_w, a.version.size());
  }
  out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", "NODE", node_w, "URL", url_w, "VERSION", version_w,
                     "STATE");
  for (const history::StoredAgent& a : list.rows) {
    const std::string state =
        history::agent_up(a, list.now_ns) ? std::string("up") : "down since " + utc(a.last_seen_ns) + " UTC";
    out += fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", a.node, node_w, a.url.empty() ? "-" : a.url, url_w,
                       a.version, version_w, state);
  }
  return out;
}

}  // namespace eacgm::exporting
