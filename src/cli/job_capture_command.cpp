// `eacgm capture --job J` (cli/job_capture_command.h): the flags, the fleet's store read
// for where the job's ranks are, the capture itself (server/job_capture.h) and the file.
#include "cli/job_capture_command.h"

#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "cli/trace_runner.h"
#include "history/history_setup.h"
#include "history/job_ranks.h"
#include "history/store.h"
#include "history/store_url.h"
#include "node/node_config.h"
#include "server/access_token.h"
#include "server/job_capture.h"

namespace eacgm::cli {

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
  const server::JobCaptureAsk ask{flags.job, flags.seconds, token, flags.lookback_s};
  const server::JobCaptureResult result = server::capture_job(*places, store_name, ask);
  for (const auto& note : result.notes) print_command_error("capture", note);
  if (!result.error.empty()) {
    close_out();
    print_command_error("capture", result.error);
    return 1;
  }
  const std::string& trace = result.trace;
  const bool written = std::fwrite(trace.data(), 1, trace.size(), out) == trace.size();
  const bool closed = out == stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (!written || !closed) {
    print_command_error("capture", fmt::format("-o {}: {}", flags.output, std::strerror(errno)));
    return 1;
  }
  if (flags.output != "-") {
    print_error(fmt::format(
        "captured {} of {} ranks of job {} on {} nodes over {:.1f} s into {} (open it in "
        "ui.perfetto.dev)",
        result.captured, result.ranks.size(), flags.job, result.nodes.size(), flags.seconds, flags.output));
  }
  return 0;
}

}  // namespace eacgm::cli
