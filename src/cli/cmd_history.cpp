// `eacgm history`: what a node's agent kept, over any past window, exited processes
// included: the tables `eacgm run` prints, the lists' top rows and how many more, or
// (--json) one document.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/history_access.h"
#include "cli/trace_runner.h"
#include "export/agent_list.h"
#include "export/history_json.h"
#include "export/history_tables.h"
#include "history/history_reader.h"
#include "history/history_setup.h"
#include "history/history_window.h"
#include "history/job_report_read.h"
#include "history/store_url.h"
#include "node/node_config.h"
#include "server/history_forward.h"

namespace eacgm::cli {
namespace {

struct HistoryFlags {
  HistoryAccessFlags access;
  std::string comm;
  std::uint32_t pid = 0;
  std::size_t limit = 20;  // rows of each list
  bool all = false;
  bool json = false;
};

// Every page of a list after `page`'s first (--all), each of the most rows a page holds.
template <class Page, class Ask>
Status add_pages(Page& page, std::uint64_t total, history::HistoryQuery q, Ask&& ask) {
  while (page.rows.size() < total) {
    q.offset = page.rows.size();
    q.limit = history::kMaxPageRows;
    auto more = ask(q);
    if (!more) return std::move(more).take_error();
    if (more->rows.empty()) break;
    page.rows.insert(page.rows.end(), std::make_move_iterator(more->rows.begin()),
                     std::make_move_iterator(more->rows.end()));
  }
  return {};
}

// The job report's figures of the jobs listed.
Result<bool> read_usage(history::Store& s, history::Tier tier, const history::HistoryQuery& q,
                        const history::ReportOptions& options, exporting::HistoryReport& report) {
  auto usage = history::read_jobs_usage(s, q, tier, report.jobs.rows, options);
  if (!usage) return std::move(usage).take_error();
  report.job_usage = std::move(usage).value();
  return true;
}

// The report of a window: the lists' first pages (every page with --all).
Result<bool> read_report(history::Store& s, history::Tier tier, const history::HistoryQuery& q, bool all,
                         const history::ReportOptions& options, exporting::HistoryReport& report) {
  report.tier = tier;
  auto processes = s.processes(q, tier);
  if (!processes) return std::move(processes).take_error();
  auto jobs = s.jobs(q, tier);
  if (!jobs) return std::move(jobs).take_error();
  auto functions = s.functions(q, tier);
  if (!functions) return std::move(functions).take_error();
  auto kernels = s.kernels(q, tier);
  if (!kernels) return std::move(kernels).take_error();
  auto gpus = s.gpus(q, tier);
  if (!gpus) return std::move(gpus).take_error();
  auto anomalies = s.anomalies(q);
  if (!anomalies) return std::move(anomalies).take_error();
  auto leaks = s.leaks(q);
  if (!leaks) return std::move(leaks).take_error();
  report.processes = std::move(processes).value();
  report.jobs = std::move(jobs).value();
  report.functions = std::move(functions).value();
  report.kernels = std::move(kernels).value();
  report.gpus = std::move(gpus).value();
  report.anomalies = std::move(anomalies).value();
  report.leaks = std::move(leaks).value();
  if (!all) return read_usage(s, tier, q, options, report);
  Status st = add_pages(report.processes, report.processes.totals.processes, q,
                        [&](const history::HistoryQuery& p) { return s.processes(p, tier); });
  if (st) st = add_pages(report.jobs, report.jobs.total, q, [&](const auto& p) { return s.jobs(p, tier); });
  if (st)
    st =
        add_pages(report.anomalies, report.anomalies.total, q, [&](const auto& p) { return s.anomalies(p); });
  if (st) st = add_pages(report.leaks, report.leaks.total, q, [&](const auto& p) { return s.leaks(p); });
  if (!st) return std::move(st).take_error();
  return read_usage(s, tier, q, options, report);
}

// A node that ships its rollups to this store keeps its raw intervals itself: a window of
// it at the raw tier has here only its whole minutes. Says where the rest is (its agent,
// which any agent asks for it: server/history_forward.h).
void say_where_raw_rows_are(history::HistoryReader& reader, const history::HistoryQuery& q,
                            history::Tier tier) {
  if (!q.node || tier != history::Tier::kRaw) return;
  auto keeping = reader.query<history::NodeKeeping>(
      q, [&](history::Store& s, history::Tier) { return s.node_keeping(*q.node); });
  if (!keeping || !keeping->rollups_only) return;
  auto list = reader.query<history::AgentList>(history::HistoryQuery{},
                                               [](history::Store& s, history::Tier) { return s.agents(); });
  std::string where = "its agent (none listed in this store's agents)";
  if (list) {
    for (const history::StoredAgent& a : list->rows) {
      if (a.node != *q.node) continue;
      where = fmt::format("its agent at {} ({})", a.url,
                          history::agent_up(a, list->now_ns)
                              ? "up"
                              : "last seen " + server::span_text(list->now_ns - a.last_seen_ns) + " ago");
    }
  }
  std::fprintf(stderr,
               "note: node %s ships only its minutes and hours to this store; its rows below a minute are on "
               "%s: GET /api/v1/history/...?node=%s there, or on any agent of the fleet\n",
               q.node->c_str(), where.c_str(), q.node->c_str());
}

int history_command(const CommandContext& ctx, const HistoryFlags& flags) {
  auto access = open_history_access(ctx, flags.access);
  if (!access) return 2;
  history::HistoryQuery* q = &access->query;
  if (flags.pid != 0) q->pid = flags.pid;
  if (!flags.comm.empty()) q->comm = flags.comm;

  q->limit = flags.all ? history::kMaxPageRows : flags.limit;

  // Reads only: a store that is not there is an error, never made.
  history::HistoryReader reader(access->setup.url, access->setup.options.retention, 1);
  exporting::HistoryReport report;
  report.query = *q;
  auto got = reader.query<bool>(*q, [&](history::Store& s, history::Tier tier) {
    return read_report(s, tier, *q, flags.all, access->config.report, report);
  });
  if (!got) {
    print_error(got.error());
    return 1;
  }
  const std::string out =
      flags.json ? exporting::history_report_json(report) + "\n"
                 : exporting::render_history_text(report, flags.all ? report.kernels.size() : flags.limit);
  std::fwrite(out.data(), 1, out.size(), stdout);
  say_where_raw_rows_are(reader, *q, report.tier);
  return 0;
}

// `eacgm history nodes`: every node's agent in the fleet's store (--store, else [store]
// fleet_url, else [store] url), with where its API answers and whether it is up.
int history_nodes_command(const CommandContext& ctx, const HistoryFlags& flags) {
  auto access = open_history_access(ctx, flags.access);
  if (!access) return 2;
  const std::string url =
      flags.access.store.empty() ? history::fleet_store_url(access->setup) : access->setup.url;
  history::HistoryReader reader(url, access->setup.options.retention, 1);
  auto list = reader.query<history::AgentList>(history::HistoryQuery{},
                                               [](history::Store& s, history::Tier) { return s.agents(); });
  if (!list) {
    print_error(list.error());
    return 1;
  }
  const std::string store = history::redact_store_url(url);
  const std::string out =
      flags.json ? exporting::agents_json(*list, store) + "\n" : exporting::render_agents_text(*list, store);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

void add_history_command(CLI::App& app, CommandContext& ctx) {
  auto flags = std::make_shared<HistoryFlags>();
  auto* sub = app.add_subcommand("history",
                                 "what the agent kept (serve's store): calls, processes, kernels, GPUs, "
                                 "anomalies and leaks over a past window, exited processes included");
  add_history_access_options(*sub, ctx, flags->access, "--until");
  sub->add_option("--pid", flags->pid, "only this process")->check(CLI::Range(1u, 0xffffffffu));
  sub->add_option("--comm", flags->comm, "only processes of this name");
  sub->add_option("--limit", flags->limit,
                  "rows of each list (processes, jobs, kernels, anomalies, leaks), the most calls first; how "
                  "many more the window has is said (default 20)")
      ->check(CLI::Range(std::size_t{1}, history::kMaxPageRows));
  sub->add_flag("--all", flags->all, "every row of each list");
  sub->add_flag("--json", flags->json,
                "one JSON document instead of tables (its lists as --limit and --all say)");
  sub->footer(
      "Examples:\n"
      "  eacgm history --since 6h\n"
      "  eacgm history --since 24h --limit 100\n"
      "  eacgm history nodes\n"
      "  eacgm history --from 2026-11-28T08:00:00Z --until 2026-11-28T09:00:00Z --comm python3 --json");
  auto* nodes = sub->add_subcommand(
      "nodes",
      "every node's agent in the fleet's store ([store] fleet_url, else the store): its API's URL, its "
      "version, and whether it is up (seen within three heartbeats) or down since when (--json: one "
      "document)");
  nodes->fallthrough();  // --store, --config and --json are history's
  sub->final_callback([&ctx, flags, nodes] {
    ctx.exit_code = nodes->parsed() ? history_nodes_command(ctx, *flags) : history_command(ctx, *flags);
  });
}

}  // namespace eacgm::cli
