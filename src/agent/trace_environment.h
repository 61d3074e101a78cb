// The duty cycle's measuring settings at start-up: the environment's overrides of the
// [trace] values (EACGM_DUTY_*), read in this one place, and the log files they name.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ingest/trace_config.h"

namespace eacgm::agent {

// Sets `trace`'s duty settings the environment sets: EACGM_DUTY_FRACTION (duty_fraction, a
// fraction in (0, 1]), EACGM_DUTY_SWITCHES (duty_switch_log) and EACGM_DUTY_LOG (duty_log;
// set empty, no log). A bad fraction is an error, not ignored.
Status apply_environment_overrides(ingest::TraceConfig& trace);

// The file at `path`, opened for writing (null for ""); `what` names the settings that
// give its path, in the error ("[trace] duty_log or EACGM_DUTY_LOG").
Result<std::shared_ptr<std::FILE>> open_log(const std::string& path, std::string_view what);

}  // namespace eacgm::agent
