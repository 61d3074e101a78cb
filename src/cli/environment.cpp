// getenv for the stages, in one place (the hook library's own variables are read by the
// hook; EACGM_HOOK and EACGM_PRIVATE_DRIVER by hook_path.cpp), and where eacgm keeps files.
#include "cli/environment.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "probe/bpf_tracer.h"
#include "sample/nvml_api.h"

namespace eacgm::cli {
namespace {

std::string value_of(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

// `dir`, made with its parents (the new ones 0700) when missing; true when it can be written.
bool writable_directory(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::create_directories(dir, ec))
    std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
  return ::access(dir.c_str(), W_OK | X_OK) == 0;
}

// The XDG rule: a relative path in the variable is ignored, as unset.
bool set(const char* value) { return value != nullptr && value[0] == '/'; }

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

std::string state_directory(const char* xdg_state_home, const char* home, const char* tmpdir) {
  if (set(xdg_state_home) && writable_directory(std::string(xdg_state_home) + "/eacgm"))
    return std::string(xdg_state_home) + "/eacgm";
  if (set(home) && writable_directory(std::string(home) + "/.local/state/eacgm"))
    return std::string(home) + "/.local/state/eacgm";
  if (set(tmpdir) && ::access(tmpdir, W_OK | X_OK) == 0) return tmpdir;
  return "/tmp";
}

std::string state_directory() {
  return state_directory(std::getenv("XDG_STATE_HOME"), std::getenv("HOME"), std::getenv("TMPDIR"));
}

}  // namespace eacgm::cli
