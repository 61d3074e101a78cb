// Environment overrides of the duty cycle's [trace] settings, and their log files.
#include "agent/trace_environment.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace eacgm::agent {

Status apply_environment_overrides(ingest::TraceConfig& trace) {
  if (const char* text = std::getenv("EACGM_DUTY_FRACTION"); text != nullptr) {
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
  if (const char* path = std::getenv("EACGM_DUTY_SWITCHES"); path != nullptr) trace.duty_switch_log = path;
  if (const char* path = std::getenv("EACGM_DUTY_LOG"); path != nullptr) trace.duty_log = path;
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
