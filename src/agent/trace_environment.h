// The duty cycle's measuring settings at start-up: the environment's overrides of the
// [trace] values (EACGM_DUTY_*), read at the edges (the command line, the Python module)
// and handed in, and the log files they name.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "ingest/trace_config.h"

namespace eacgm::agent {

// The environment's EACGM_DUTY_FRACTION, EACGM_DUTY_SWITCHES and EACGM_DUTY_LOG as they
// were set (nullopt: unset). Checked only where they apply: a fraction nobody uses is
// never an error.
struct DutyOverrides {
  std::optional<std::string> fraction;    // duty_fraction
  std::optional<std::string> switch_log;  // duty_switch_log
  std::optional<std::string> log;         // duty_log; set empty: no log
};

// The overrides `lookup` finds (std::getenv at the edges; null: unset).
DutyOverrides duty_overrides(const std::function<const char*(const char*)>& lookup);

// Sets the duty settings of `trace` that `overrides` sets. A bad fraction (not in
// (0, 1]) is a usage error, not ignored.
Status apply_duty_overrides(const DutyOverrides& overrides, ingest::TraceConfig& trace);

// The file at `path`, opened for writing (null for ""); `what` names the settings that
// give its path, in the error ("[trace] duty_log or EACGM_DUTY_LOG").
Result<std::shared_ptr<std::FILE>> open_log(const std::string& path, std::string_view what);

}  // namespace eacgm::agent
