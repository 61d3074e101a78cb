// Environment overrides of the duty cycle's [trace] settings, and their log files.
#include "agent/trace_environment.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace eacgm::agent {

DutyOverrides duty_overrides(const std::function<const char*(const char*)>& lookup) {
  auto read = [&lookup](const char* name) -> std::optional<std::string> {
    const char* value = lookup(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  return DutyOverrides{read("EACGM_DUTY_FRACTION"), read("EACGM_DUTY_SWITCHES"), read("EACGM_DUTY_LOG")};
}

Status apply_duty_overrides(const DutyOverrides& overrides, ingest::TraceConfig& trace) {
  if (overrides.fraction) {
    const char* text = overrides.fraction->c_str();
    char* end = nullptr;
    errno = 0;
    const double f = std::strtod(text, &end);
    if (end == text || *end != '\0' || errno != 0 || !(f > 0.0 && f <= 1.0)) {
      return make_error(
          ErrorKind::kUsage,
          fmt::format("EACGM_DUTY_FRACTION=\"{}\": expected a fraction in (0, 1], such as 0.5", text));
    }
    trace.duty_fraction = f;
  }
  if (overrides.switch_log) trace.duty_switch_log = *overrides.switch_log;
  if (overrides.log) trace.duty_log = *overrides.log;
  return {};
}

Result<std::shared_ptr<std::FILE>> open_log(const std::string& path, std::string_view what) {
  if (path.empty()) return std::shared_ptr<std::FILE>();
  std::shared_ptr<std::FILE> file(std::fopen(path.c_str(), "we"), [](std::FILE* f) {
    if (f) std::fclose(f);
  });
  if (!file) {
    const int err = errno;
    return make_errno_error(ErrorKind::kUsage, err,
                            fmt::format("{} = \"{}\": cannot write it: {}", what, path, std::strerror(err)));
  }
  return file;
}

}  // namespace eacgm::agent
