// `eacgm capture --job J` (cli/job_capture.h): where the job's ranks are (the fleet's
// store), one capture request per rank to its node's agent, all on threads started
// together so that the windows coincide, and their traces merged.
#include "cli/job_capture.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cli/trace_runner.h"
#include "export/json_text.h"
#include "export/perfetto_merge.h"
#include "history/history_setup.h"
#include "history/job_ranks.h"
#include "history/store.h"
#include "history/store_url.h"
#include "node/node_config.h"
#include "server/access_token.h"
#include "server/api_client.h"

namespace eacgm::cli {
namespace {

using json = nlohmann::json;

// One rank to capture and what came back.
struct RankCapture {
  std::string node;
  std::string url;
  bool agent_up = false;
  history::JobRankPlace place;
  std::int64_t offset_ns = 0;
  std::optional<history::ClockEstimate> clock;
  std::string trace;  // the agent's answer
  std::string error;  // "" when it answered with a trace
};

std::string label_of(const RankCapture& c) {
  return c.place.rank >= 0 ? fmt::format("{}/rank {}", c.node, c.place.rank)
                           : fmt::format("{}/pid {}", c.node, c.place.pid);
}

// One request for all of a node's ranks (`pids`: one window, one of the agent's capture
// slots); each rank gets its trace or why it has none.
void capture_node(std::span<RankCapture*> ranks, const std::string& token, double seconds) {
  const RankCapture& first = *ranks.front();
  const auto fail = [&](const std::string& why) {
    for (RankCapture* c : ranks) {
      c->error = why;
      if (!c->agent_up) c->error += " (the store lists its agent as down)";
    }
  };
  auto client = server::ApiClient::open(first.url, token,
                                        std::chrono::seconds(static_cast<long>(std::ceil(seconds)) + 30));
  if (!client) return fail(fmt::format("the agent's URL in the store: {}", client.error()));
  json ask{{"pids", json::array()}, {"seconds", seconds}};
  for (const RankCapture* c : ranks) ask["pids"].push_back(c->place.pid);
  auto reply = (*client)->post_json("/api/v1/capture", ask.dump());
  if (!reply) return fail(reply.error());
  if (reply->status != 200) {
    return fail(fmt::format("the agent at {} answered {}: {}", first.url, reply->status,
                            server::api_error_text(*reply)));
  }
  json doc = json::parse(reply->body, nullptr, false);
  reply->body.clear();
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("captures") || !doc["captures"].is_array()) {
    return fail(fmt::format("the agent at {} answered with no list of captures", first.url));
  }
  for (RankCapture* c : ranks) {
    c->error = fmt::format("the agent at {} answered without pid {}", first.url, c->place.pid);
    for (auto& one : doc["captures"]) {
      if (!one.is_object() || one.value("pid", json()) != json(c->place.pid)) continue;
      if (one.contains("trace")) {
        c->trace = exporting::json_text(one["trace"]);
        one["trace"] = nullptr;  // the text is all that is needed of it now
        c->error.clear();
      } else {
        c->error = fmt::format("the agent at {} answered {}: {}", first.url, one.value("status", 0),
                               one.value("error", std::string("no trace")));
      }
    }
  }
}

json about_of(const RankCapture& c) {
  json about{{"node", c.node}, {"pid", c.place.pid}, {"agent", c.url}};
  about["rank"] = c.place.rank >= 0 ? json(c.place.rank) : json(nullptr);
  about["clock_uncertainty_ns"] = c.clock ? json(c.clock->uncertainty_ns) : json(nullptr);
  return about;
}

}  // namespace

int capture_job_command(const CommandContext& ctx, const JobCaptureFlags& flags) {
  if (!(flags.seconds > 0 && flags.seconds <= 60)) {
    print_command_error("capture", fmt::format("--seconds {}: more than 0 and at most 60", flags.seconds));
    return 2;
  }
  if (flags.job.empty()) {
    print_command_error("capture", "--job: give the job's id (SLURM_JOB_ID, torchrun's run id)");
    return 2;
  }
  std::string token;
  if (!flags.token_file.empty()) {
    auto t = server::load_token_file(flags.token_file);
    if (!t) {
      print_command_error("capture", "--token-file: " + t.error());
      return 2;
    }
    token = std::move(*t);
  }
  auto config = node::load_config(ctx.config_path);
  if (!config) {
    print_command_error("capture", config.error());
    return 2;
  }
  auto setup = history::resolve_history(config->store, flags.store, "");
  if (!setup) {
    print_command_error("capture", "--store: " + setup.error());
    return 2;
  }
  if (!*setup) {
    print_command_error("capture",
                        "the history is off ([store] url = \"off\"); name the fleet's store with --store");
    return 2;
  }
  // The agents and the job's ranks are in the fleet's store: [store] fleet_url when the
  // node ships there.
  const std::string url = flags.store.empty() ? history::fleet_store_url(**setup) : (*setup)->url;
  // Opened first: a file that cannot be written is said before anything is captured.
  std::FILE* out = flags.output == "-" ? stdout : std::fopen(flags.output.c_str(), "w");
  if (out == nullptr) {
    print_command_error("capture", fmt::format("-o {}: {}", flags.output, std::strerror(errno)));
    return 2;
  }
  // On a failure: no trace, so no file either.
  const auto close_out = [&] {
    if (out != stdout) {
      std::fclose(out);
      std::remove(flags.output.c_str());
    }
    out = nullptr;
  };
  auto store = history::open_store(url, history::StoreAccess::kRead);
  if (!store) {
    close_out();
    print_command_error("capture", store.error());
    return 1;
  }
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  auto places =
      history::read_job_places(**store, flags.job, now, static_cast<std::int64_t>(flags.lookback_s * 1e9),
                               static_cast<std::int64_t>(history::Store::kStandingsKeptNs));
  if (!places) {
    close_out();
    print_command_error("capture", places.error());
    return 1;
  }
  const std::string store_name = history::redact_store_url(url);
  store->reset();  // the captures take seconds: the store's connection is not held meanwhile
  std::vector<RankCapture> captures;
  for (const auto& n : places->nodes) {
    for (const auto& r : n.ranks) {
      RankCapture c;
      c.node = n.node;
      c.url = n.agent_url;
      c.agent_up = n.agent_up;
      c.place = r;
      c.clock = n.clock;
      c.offset_ns = n.clock ? n.clock->offset_ns : 0;
      if (c.url.empty()) c.error = fmt::format("node {} has no agent in {}'s agents", n.node, store_name);
      captures.push_back(std::move(c));
    }
  }
  if (captures.empty()) {
    close_out();
    print_command_error("capture",
                        fmt::format("job {}: no running process of this job in {} over the last {:.0f} s "
                                    "(each node's agent writes its processes there every interval)",
                                    flags.job, store_name, flags.lookback_s));
    return 1;
  }
  // Every node's request at once: the agents' windows start within a round trip of each
  // other.
  {
    std::vector<std::vector<RankCapture*>> by_node;
    for (auto& c : captures) {
      if (!c.error.empty()) continue;
      if (by_node.empty() || by_node.back().front()->node != c.node) by_node.emplace_back();
      by_node.back().push_back(&c);
    }
    std::vector<std::jthread> threads;
    threads.reserve(by_node.size());
    for (auto& ranks : by_node) {
      threads.emplace_back([&ranks, &token, &flags] { capture_node(ranks, token, flags.seconds); });
    }
  }
  std::vector<exporting::TracePart> parts;
  std::vector<exporting::MissingPart> missing;
  std::vector<std::string> nodes;
  for (auto& c : captures) {
    if (nodes.empty() || nodes.back() != c.node) nodes.push_back(c.node);
    const long key = c.place.rank >= 0 ? c.place.rank : (1L << 30) + c.place.pid;
    if (c.error.empty()) {
      parts.push_back(exporting::TracePart{label_of(c), std::move(c.trace), c.offset_ns, key, about_of(c)});
    } else {
      print_command_error("capture",
                          fmt::format("{} (pid {}) not captured: {}", label_of(c), c.place.pid, c.error));
      missing.push_back(exporting::MissingPart{label_of(c), c.error, key, about_of(c)});
    }
  }
  if (parts.empty()) {
    close_out();
    print_command_error(
        "capture", fmt::format("job {}: no node's agent answered ({} ranks on {} nodes asked)", flags.job,
                               captures.size(), nodes.size()));
    return 1;
  }
  const json about{{"job", flags.job},
                   {"store", store_name},
                   {"seconds", flags.seconds},
                   {"nodes", nodes},
                   {"clock",
                    "ts: Unix-epoch microseconds on the store's clock: each node's times plus its offset_ns "
                    "(node_clocks: the store's clock minus the node's; 0 where not measured)"}};
  // An answer that is no capture (a proxy's page, a cut body) is one rank not captured.
  std::vector<exporting::MissingPart> refused;
  auto merged = exporting::merge_perfetto_traces(parts, missing, about, &refused);
  for (const auto& r : refused)
    print_command_error("capture", fmt::format("{} not captured: {}", r.label, r.reason));
  if (merged && refused.size() == parts.size()) {
    merged =
        make_error(fmt::format("job {}: no node's agent answered with a capture ({} ranks on {} nodes asked)",
                               flags.job, captures.size(), nodes.size()));
  }
  if (!merged) {
    close_out();
    print_command_error("capture", merged.error());
    return 1;
  }
  const bool written = std::fwrite(merged->data(), 1, merged->size(), out) == merged->size();
  const bool closed = out == stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (!written || !closed) {
    print_command_error("capture", fmt::format("-o {}: {}", flags.output, std::strerror(errno)));
    return 1;
  }
  if (flags.output != "-") {
    print_error(
        fmt::format("captured {} of {} ranks of job {} on {} nodes over {:.1f} s into {} (open it in "
                    "ui.perfetto.dev)",
                    parts.size(), captures.size(), flags.job, nodes.size(), flags.seconds, flags.output));
  }
  return 0;
}

}  // namespace eacgm::cli
