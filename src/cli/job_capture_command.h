// `eacgm capture --job J`: the same window captured on every node that holds a rank of the
// job (server/job_capture.h), written to a file.
#pragma once

#include <string>

#include "cli/commands.h"

namespace eacgm::cli {

struct JobCaptureFlags {
  std::string job;
  std::string store;       // "" : [store] fleet_url, else [store] url of --config
  std::string token_file;  // the agents' bearer token
  double seconds = 5;
  std::string output;
  double lookback_s = 900;  // the processes of the job seen this long back
};

// Exit 0 with at least one rank captured (those not captured named on stderr and in the
// trace), 1 when none was or the store could not be read, 2 for a usage error.
int capture_job_command(const CommandContext& ctx, const JobCaptureFlags& flags);

}  // namespace eacgm::cli
