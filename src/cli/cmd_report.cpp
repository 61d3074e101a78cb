// `eacgm report`: what each job used, wasted and cost over a past window of the history
// (docs/job-report.md): a table, CSV (--csv) or one JSON document (--json).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/history_access.h"
#include "cli/trace_runner.h"
#include "export/job_report.h"
#include "history/history_reader.h"
#include "history/job_report_read.h"

namespace eacgm::cli {
namespace {

struct ReportFlags {
  HistoryAccessFlags access;
  std::string job, pod, name_space;
  bool json = false;
  bool csv = false;
};

int report_command(const CommandContext& ctx, const ReportFlags& flags) {
  auto access = open_history_access(ctx, flags.access);
  if (!access) return 2;
  history::JobReport report;
  report.query = access->query;
  report.options = access->config.report;
  if (!flags.job.empty()) report.selector = {history::JobSelector::By::kJob, flags.job};
  if (!flags.pod.empty()) report.selector = {history::JobSelector::By::kPod, flags.pod};
  if (!flags.name_space.empty()) report.selector = {history::JobSelector::By::kNamespace, flags.name_space};

  // Reads only: a store that is not there is an error, never made.
  history::HistoryReader reader(access->setup.url, access->setup.options.retention, 1);
  auto rows = reader.query<std::vector<history::JobReportRow>>(
      report.query, [&](history::Store& s, history::Tier tier) {
        report.tier = tier;
        return history::read_job_report(s, report.query, report.selector, tier, report.options);
      });
  if (!rows) {
    print_error(rows.error());
    return 1;
  }
  report.rows = std::move(rows).value();
  const std::string out = flags.json  ? exporting::job_report_json(report) + "\n"
                          : flags.csv ? exporting::job_report_csv(report)
                                      : exporting::job_report_text(report);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, CommandContext& ctx) {
  auto flags = std::make_shared<ReportFlags>();
  auto* sub = app.add_subcommand("report",
                                 "what each job used, wasted and cost over a past window (serve's store): "
                                 "GPU-hours, idle GPU-hours, energy and cost per job, pod or namespace");
  add_history_access_options(*sub, ctx, flags->access, "--to");
  auto* job = sub->add_option("--job", flags->job, "only this job (SLURM_JOB_ID, torchrun's run id)");
  auto* pod = sub->add_option("--pod", flags->pod, "only this pod (POD or NAMESPACE/POD)");
  auto* ns = sub->add_option("--namespace", flags->name_space, "only this namespace's jobs and pods");
  job->excludes(pod, ns);
  pod->excludes(ns);
  auto* json = sub->add_flag("--json", flags->json, "one JSON document instead of the table");
  auto* csv = sub->add_flag("--csv", flags->csv, "CSV, one line per job, instead of the table");
  json->excludes(csv);
  sub->footer(
      "Without --job, --pod or --namespace: every job and pod that held a GPU in the window.\n"
      "Price and idle threshold: [report] gpu_hour_price, currency, idle_threshold.\n"
      "Examples:\n"
      "  eacgm report --since 24h\n"
      "  eacgm report --job 81234 --since 7d --json\n"
      "  eacgm report --namespace research --from 2026-11-01T00:00:00Z --to 2026-12-01T00:00:00Z --csv");
  sub->final_callback([&ctx, flags] { ctx.exit_code = report_command(ctx, *flags); });
}

}  // namespace eacgm::cli
