// `eacgm capture`: asks a running agent (`eacgm serve`) to trace one process call by
// call for a few seconds (POST /api/v1/capture) and writes its Perfetto timeline.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/client_flags.h"
#include "cli/commands.h"
#include "cli/job_capture_command.h"
#include "cli/trace_runner.h"

namespace eacgm::cli {
namespace {

struct CaptureFlags {
  ClientFlags client;
  std::uint32_t pid = 0;
  std::string comm;
  long rank = -1;
  double seconds = 5;
  std::string output;
  JobCaptureFlags job;
};

int capture_command(const CommandContext& ctx, CaptureFlags& flags, const CLI::App& sub) {
  if (!flags.job.job.empty()) {
    for (const char* other : {"--pid", "--comm", "--rank", "--server"}) {
      if (sub.count(other) > 0) {
        print_command_error(
            "capture", fmt::format("--job captures every rank of the job through the agents the store lists: "
                                   "leave out {}",
                                   other));
        return 2;
      }
    }
    flags.job.seconds = flags.seconds;
    flags.job.output = flags.output;
    flags.job.token_file = flags.client.token_file;
    return capture_job_command(ctx, flags.job);
  }
  for (const char* job_only : {"--store", "--config"}) {
    if (sub.count(job_only) > 0) {
      print_command_error("capture", fmt::format("{} goes with --job (the fleet's store)", job_only));
      return 2;
    }
  }
  const int selectors = (flags.pid != 0 ? 1 : 0) + (!flags.comm.empty() ? 1 : 0) + (flags.rank >= 0 ? 1 : 0);
  if (selectors != 1) {
    print_command_error("capture", "name one process: --pid P, --comm NAME or --rank R (or a job: --job J)");
    return 2;
  }
  if (!(flags.seconds > 0 && flags.seconds <= 60)) {
    print_command_error("capture", fmt::format("--seconds {}: more than 0 and at most 60", flags.seconds));
    return 2;
  }
  nlohmann::json ask{{"seconds", flags.seconds}};
  if (flags.pid != 0) ask["pid"] = flags.pid;
  if (!flags.comm.empty()) ask["comm"] = flags.comm;
  if (flags.rank >= 0) ask["rank"] = flags.rank;
  // The answer comes after the window: wait for it, and some more for the drain.
  auto client =
      open_client(flags.client, std::chrono::seconds(static_cast<long>(std::ceil(flags.seconds)) + 30));
  if (!client) {
    print_command_error("capture", client.error());
    return 2;
  }
  // Opened first: a file that cannot be written is said before the process is captured.
  std::FILE* out = flags.output == "-" ? stdout : std::fopen(flags.output.c_str(), "w");
  if (out == nullptr) {
    print_command_error("capture", fmt::format("-o {}: {}", flags.output, std::strerror(errno)));
    return 2;
  }
  auto reply = (*client)->post_json("/api/v1/capture", ask.dump());
  if (!reply) {
    if (out != stdout) std::fclose(out);
    print_command_error("capture", reply.error());
    return 1;
  }
  if (reply->status != 200) {
    if (out != stdout) std::fclose(out);
    print_command_error(
        "capture", fmt::format("the agent answered {}: {}", reply->status, server::api_error_text(*reply)));
    return reply->status == 400 ? 2 : 1;
  }
  const bool written = std::fwrite(reply->body.data(), 1, reply->body.size(), out) == reply->body.size();
  const bool closed = out == stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (!written || !closed) {
    print_command_error("capture", fmt::format("-o {}: {}", flags.output, std::strerror(errno)));
    return 1;
  }
  auto doc = nlohmann::json::parse(reply->body, nullptr, false);
  if (!doc.is_discarded() && doc.contains("eacgm_capture") && out != stdout) {
    const auto& c = doc["eacgm_capture"];
    print_error(fmt::format(
        "captured {} calls of pid {} ({}) over {:.1f} s into {}{} (open it in ui.perfetto.dev)",
        c.value("calls", 0), c.value("pid", 0), c.value("comm", std::string()),
        static_cast<double>(c.value("end_ns", std::uint64_t{0}) - c.value("begin_ns", std::uint64_t{0})) /
            1e9,
        flags.output, c.value("truncated", false) ? ", truncated at the cap" : ""));
  }
  return 0;
}

}  // namespace

void add_capture_command(CLI::App& app, CommandContext& ctx) {
  auto flags = std::make_shared<CaptureFlags>();
  auto* sub = app.add_subcommand("capture",
                                 "trace one process call by call for a few seconds through a running agent "
                                 "(eacgm serve) and write its Perfetto timeline");
  add_client_options(*sub, flags->client);
  sub->add_option("--pid", flags->pid, "the process to capture")->check(CLI::Range(1u, 0xffffffffu));
  sub->add_option("--comm", flags->comm, "the process of this name (it must be the only one)");
  sub->add_option("--rank", flags->rank, "the traced process of this training rank (RANK)")
      ->check(CLI::Range(0L, 1L << 24));
  sub->add_option(
      "--job", flags->job.job,
      "every rank of this job (SLURM_JOB_ID, torchrun's run id) on every node, through the agents "
      "the fleet's store lists, merged into one timeline");
  sub->add_option(
      "--store", flags->job.store,
      "with --job: the fleet's store, postgresql://... (default [store] fleet_url, else [store] url "
      "of --config)");
  sub->add_option("--config", ctx.config_path, "with --job: the configuration file naming the fleet's store");
  sub->add_option("--seconds", flags->seconds, "how long, at most 60 (default 5)");
  sub->add_option("-o,--output", flags->output, "where to write the timeline (- for stdout)")->required();
  sub->footer(
      "Examples:\n"
      "  eacgm capture --pid 4242 --seconds 5 -o step.json\n"
      "  eacgm capture --server http://gpu-node-3:9977 --token-file ~/.eacgm-token --rank 0 --seconds 3 -o "
      "r0.json\n"
      "  eacgm capture --job 81723 --store postgresql://eacgm@db/fleet --token-file ~/.eacgm-token --seconds "
      "3 "
      "-o job.json");
  sub->final_callback([&ctx, flags, sub] { ctx.exit_code = capture_command(ctx, *flags, *sub); });
}

}  // namespace eacgm::cli
