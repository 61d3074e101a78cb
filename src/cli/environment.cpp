// getenv for the stages, in one place (the hook library's own variables are read by the
// hook; EACGM_HOOK and EACGM_PRIVATE_DRIVER by hook_path.cpp).
#include "cli/environment.h"

#include <cstdlib>

#include "probe/bpf_tracer.h"
#include "sample/nvml_api.h"

namespace eacgm::cli {
namespace {

std::string value_of(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

}  // namespace

void apply_process_environment() { probe::set_libbpf_debug(std::getenv("EACGM_LIBBPF_DEBUG") != nullptr); }

void read_trace_environment(agent::TraceRequest& request) {
  if (const char* path = std::getenv("PATH")) request.search_path = path;
  request.nvml_library = nvml_library_from_environment();
  request.duty = agent::duty_overrides(std::getenv);
}

std::string nvml_library_from_environment() { return value_of(sample::nvml::kLibraryEnv); }

probe::InterpreterEnvironment interpreter_environment() {
  return {.home = value_of("HOME"),
          .pyenv_root = value_of("PYENV_ROOT"),
          .path = value_of("PATH"),
          .pyenv_version = value_of("PYENV_VERSION")};
}

}  // namespace eacgm::cli
