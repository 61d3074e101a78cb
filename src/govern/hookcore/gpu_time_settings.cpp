#include "govern/hookcore/gpu_time_settings.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace eacgm::govern {
namespace {

void warn(std::string* warnings, const char* name, const char* value, const char* why) {
  if (warnings == nullptr) return;
  *warnings += "eacgm hook: ignoring ";
  *warnings += name;
  *warnings += "=";
  *warnings += value;
  *warnings += ": ";
  *warnings += why;
  *warnings += "\n";
}

// The whole of `text` as a finite number, or false.
bool parse_number(const char* text, double* out) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (end == text || *end != '\0' || errno != 0 || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

}  // namespace

GpuTimeSettings read_gpu_time_settings(EnvLookup lookup, void* context, std::string* warnings) {
  GpuTimeSettings s;
  if (const char* v = lookup("EACGM_GPU_TIME_BUDGET", context); v != nullptr && *v != '\0') {
    double percent = 0;
    if (!parse_number(v, &percent) || percent <= 0 || percent > kMaxBudgetPercent) {
      warn(warnings, "EACGM_GPU_TIME_BUDGET", v,
           "not a share of the program's time in percent, above 0 and at most 50 (the default is 0.2)");
    } else {
      s.rate.budget = percent / 100;
    }
  }
  if (const char* v = lookup("EACGM_GPU_TIME_POLL_MS", context); v != nullptr && *v != '\0') {
    double ms = 0;
    if (!parse_number(v, &ms) || ms < 1 || ms > kMaxPollMs || ms != std::floor(ms)) {
      warn(warnings, "EACGM_GPU_TIME_POLL_MS", v,
           "not a whole number of milliseconds from 1 to 1000 (the default is 5)");
    } else {
      s.poll_ns = static_cast<std::uint64_t>(ms) * 1'000'000;
    }
  }
  if (const char* v = lookup("EACGM_GPU_TIME_HOLD", context); v != nullptr && *v != '\0') {
    const std::string_view t(v);
    if (t == "0" || t == "off" || t == "false") {
      s.hold = false;
    } else if (t != "1" && t != "on" && t != "true") {
      warn(warnings, "EACGM_GPU_TIME_HOLD", v, "not 0 or 1 (the default is 1: on)");
    }
  }
  if (const char* v = lookup("CUDA_LAUNCH_BLOCKING", context); v != nullptr && std::string_view(v) == "1")
    s.hold = false;
  return s;
}

}  // namespace eacgm::govern
