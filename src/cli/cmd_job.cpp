// `eacgm job`: a job's NCCL ranks on every node as their agents last wrote them into the
// store (nccl_standings), per communicator, with the verdict on the collective they wait
// in: the rank that never entered it and its node (analysis/job_verdict.h).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/job_stragglers.h"
#include "analysis/job_verdict.h"
#include "analysis/nccl_bandwidth.h"
#include "cli/commands.h"
#include "cli/trace_runner.h"
#include "export/job_stragglers_json.h"
#include "export/job_verdict_json.h"
#include "history/history_setup.h"
#include "history/store.h"
#include "node/node_config.h"
#include "server/access_token.h"
#include "server/job_stacks.h"

namespace eacgm::cli {
namespace {

using exporting::json;

struct JobFlags {
  std::string store;
  std::string comm;       // a communicator's id, hex
  double stale_s = 30;    // rows older than this report nothing
  double min_age_s = -1;  // -1: [hangs] min_age_s
  bool json = false;
  bool stacks = false;     // the verdicts' ranks' Python stacks, from their agents
  std::string token_file;  // the agents' bearer token ("" : [serve] token_file)
};

std::string seconds(std::uint64_t ns) { return fmt::format("{:.1f} s", static_cast<double>(ns) / 1e9); }

// The Python stacks JobStacks put on a verdict's ranks, each under its rank.
std::string stacks_text(const json& verdict) {
  std::string out;
  for (const char* list : {"in", "missing"}) {
    for (const auto& r : verdict[list]) {
      out += fmt::format("  rank {} on node {} (pid {}, {}):", r["rank"].get<int>(),
                         r["node"].get<std::string>(), r["pid"].get<std::uint32_t>(),
                         std::string(list) == "in" ? "waiting" : "never entered");
      if (r["python_stack"].is_null()) {
        out += fmt::format(" no stack: {}\n", r.value("stack_error", std::string()));
        continue;
      }
      out += "\n";
      for (const auto& f : r["python_stack"]) out += fmt::format("      {}\n", f.get<std::string>());
    }
  }
  return out;
}

// Each communicator's ranks by node, then its verdict ("none" when no rank waits).
std::string render(const std::map<std::uint64_t, std::vector<analysis::RankReport>>& comms,
                   const std::vector<analysis::JobCommVerdict>& verdicts,
                   const std::vector<analysis::JobCommStragglers>& stragglers, std::int64_t now_ns,
                   const std::map<std::uint64_t, json>& stacks) {
  std::string out;
  for (const auto& [id, rows] : comms) {
    std::map<std::string, std::vector<std::int32_t>> by_node;
    std::int32_t nranks = -1;
    for (const auto& r : rows) {
      by_node[r.node].push_back(r.standing.rank);
      nranks = std::max(nranks, r.nranks);
    }
    out += fmt::format("communicator 0x{:016x}: {} ranks reported of {}\n", id, rows.size(),
                       nranks < 0 ? std::string("?") : std::to_string(nranks));
    out += fmt::format("  {:<20} {:>6} {:>8} {:>9} {:>9} {:>10} {:>10}  {}\n", "NODE", "RANK", "PID",
                       "ENTERED", "FINISHED", "WAITING", "WRITTEN", "LAST");
    std::vector<const analysis::RankReport*> sorted;
    for (const auto& r : rows) sorted.push_back(&r);
    std::sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
      return std::tie(a->node, a->standing.rank) < std::tie(b->node, b->standing.rank);
    });
    for (const auto* r : sorted) {
      const std::uint64_t age =
          now_ns > r->written_ns ? static_cast<std::uint64_t>(now_ns - r->written_ns) : 0;
      out += fmt::format("  {:<20} {:>6} {:>8} {:>9} {:>9} {:>10} {:>10}  {}\n", r->node, r->standing.rank,
                         r->standing.pid, r->standing.entered, r->standing.finished,
                         r->standing.waiting_ns == 0 ? std::string("-") : seconds(r->standing.waiting_ns),
                         seconds(age) + " ago", analysis::nccl_collective_name(r->standing.last));
    }
    auto v =
        std::find_if(verdicts.begin(), verdicts.end(), [id = id](const auto& x) { return x.comm_id == id; });
    out += fmt::format("  {}: {}\n", v != verdicts.end() && v->hang ? "HANG" : "verdict",
                       v != verdicts.end() ? v->verdict : std::string("no rank waits past the minimum age"));
    if (auto st = stacks.find(id); st != stacks.end()) out += stacks_text(st->second);
    auto s = std::find_if(stragglers.begin(), stragglers.end(),
                          [id = id](const auto& x) { return x.comm_id == id; });
    if (s != stragglers.end()) out += fmt::format("  arrivals across nodes: {}\n", s->verdict);
  }
  if (comms.empty()) out = "no NCCL ranks reported recently\n";
  return out;
}

int job_command(const CommandContext& ctx, const JobFlags& flags) {
  auto config = node::load_config(ctx.config_path);
  if (!config) {
    print_error(config.error());
    return 2;
  }
  std::vector<std::uint64_t> ids;
  if (!flags.comm.empty()) {
    std::size_t used = 0;
    std::uint64_t id = 0;
    try {
      id = std::stoull(flags.comm, &used, 16);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != flags.comm.size() || id == 0) {
      print_error(
          fmt::format("--comm {}: not a communicator id (hex, as /api/v1/inflight's comm_id)", flags.comm));
      return 2;
    }
    ids.push_back(id);
  }
  auto setup = history::resolve_history(config->store, flags.store, "");
  if (!setup) {
    print_error("--store: " + setup.error());
    return 2;
  }
  if (!*setup) {
    print_error("the history is off ([store] url = \"off\"); name a store with --store");
    return 2;
  }
  // The rows are in the fleet's store: [store] fleet_url when the node ships there.
  const std::string url = flags.store.empty() ? history::fleet_store_url(**setup) : (*setup)->url;
  auto store = history::open_store(url, history::StoreAccess::kRead);
  if (!store) {
    print_error(store.error());
    return 1;
  }
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  auto rows = (*store)->standings(ids, now - static_cast<std::int64_t>(flags.stale_s * 1e9),
                                  analysis::JobVerdict::kMaxRanks);
  if (!rows) {
    print_error(fmt::format("reading the NCCL standings of {}: {}", (*store)->description(), rows.error()));
    return 1;
  }
  // The freshest row per rank (a rank moved between nodes is where it was last seen).
  std::map<std::pair<std::uint64_t, std::int32_t>, analysis::RankReport> freshest;
  for (auto& r : *rows) {
    auto [it, added] = freshest.emplace(std::pair{r.comm_id, r.standing.rank}, r);
    if (!added && r.written_ns > it->second.written_ns) it->second = r;
  }
  std::vector<analysis::RankReport> merged;
  std::map<std::uint64_t, std::vector<analysis::RankReport>> by_comm;
  for (auto& [key, r] : freshest) {
    merged.push_back(r);
    by_comm[key.first].push_back(r);
  }
  const double min_age = flags.min_age_s >= 0 ? flags.min_age_s : config->agent.hangs.min_age_s;
  const auto verdicts = analysis::judge_job(merged, now, static_cast<std::uint64_t>(min_age * 1e9));
  const auto stragglers = analysis::job_stragglers(merged);
  // --stacks: each verdict's ranks' stacks, asked of their nodes' agents.
  std::map<std::uint64_t, json> with_stacks;
  json stack_nodes = nullptr;
  if (flags.stacks) {
    std::string token;
    const std::string& token_file = flags.token_file.empty() ? config->serve.token_file : flags.token_file;
    if (!token_file.empty()) {
      auto t = server::load_token_file(token_file);
      if (!t) {
        print_error("--token-file: " + t.error());
        return 2;
      }
      token = std::move(*t);
    }
    std::vector<json*> docs;
    for (const auto& v : verdicts) {
      auto [it, added] = with_stacks.emplace(v.comm_id, exporting::job_comm_json(v));
      docs.push_back(&it->second);
    }
    server::JobStackOptions options;
    options.peer.token = token;
    auto* from = store->get();
    server::JobStacks stacks(options, [from] { return from->agents(); });
    stack_nodes = stacks.attach(docs, "", nullptr);
    for (const auto& n : stack_nodes) {
      if (!n["error"].is_null()) print_error(n["error"].get<std::string>());
    }
  }
  if (flags.json) {
    json comms = json::array();
    for (const auto& [id, ranks] : by_comm) {
      json list = json::array();
      for (const auto& r : ranks) {
        list.push_back(json{{"node", r.node},
                            {"rank", r.standing.rank},
                            {"pid", r.standing.pid},
                            {"entered", r.standing.entered},
                            {"finished", r.standing.finished},
                            {"waiting_ns", r.standing.waiting_ns},
                            {"written_ns", r.written_ns}});
      }
      auto v = std::find_if(verdicts.begin(), verdicts.end(),
                            [id = id](const auto& x) { return x.comm_id == id; });
      auto st = with_stacks.find(id);
      comms.push_back(json{{"comm_id", fmt::format("0x{:016x}", id)},
                           {"nranks", ranks.front().nranks},
                           {"ranks", std::move(list)},
                           {"verdict", st != with_stacks.end() ? st->second
                                       : v != verdicts.end()   ? exporting::job_comm_json(*v)
                                                               : json(nullptr)}});
    }
    json doc{{"time_ns", now},
             {"communicators", std::move(comms)},
             {"job_stragglers", exporting::job_stragglers_json(stragglers)}};
    if (flags.stacks) doc["stacks"] = std::move(stack_nodes);
    const std::string out = doc.dump() + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
  } else {
    const std::string out = render(by_comm, verdicts, stragglers, now, with_stacks);
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
  return 0;
}

}  // namespace

void add_job_command(CLI::App& app, CommandContext& ctx) {
  auto flags = std::make_shared<JobFlags>();
  auto* sub = app.add_subcommand(
      "job",
      "a job's NCCL ranks on every node, as their agents wrote them into the shared store, and the verdict "
      "on the collective they wait in: the rank missing and its node; and the rank that arrives last across "
      "nodes");
  sub->add_option("--config", ctx.config_path, "configuration file (TOML; [store] url, [hangs] min_age_s)");
  sub->add_option(
      "--store", flags->store,
      "the store the agents write: postgresql://... (a fleet) or sqlite:PATH (default [store] fleet_url, "
      "else [store] url)");
  sub->add_option("--comm", flags->comm,
                  "only this communicator (its id in hex, as /api/v1/inflight says it)");
  sub->add_option("--stale", flags->stale_s,
                  "seconds: a node's rows written longer ago than this report nothing (default 30)")
      ->check(CLI::Range(1.0, 86400.0));
  sub->add_option("--min-age", flags->min_age_s,
                  "seconds a rank must have waited for a verdict (default [hangs] min_age_s, 5)")
      ->check(CLI::Range(0.0, 86400.0));
  sub->add_flag("--json", flags->json, "one JSON document instead of tables");
  sub->add_flag("--stacks", flags->stacks,
                "the Python stack of each rank a verdict names, asked of its node's agent (found in the "
                "store's agents; one request per node, 2 s at most)");
  sub->add_option("--token-file", flags->token_file,
                  "with --stacks: the agents' bearer token (default [serve] token_file)");
  sub->footer(
      "Examples:\n"
      "  eacgm job --store postgresql://eacgm@db/fleet\n"
      "  eacgm job --store postgresql://eacgm@db/fleet --comm 0x5eed000000000001 --json\n"
      "  eacgm job --store postgresql://eacgm@db/fleet --stacks --token-file ~/.eacgm-token");
  sub->final_callback([&ctx, flags] { ctx.exit_code = job_command(ctx, *flags); });
}

}  // namespace eacgm::cli
