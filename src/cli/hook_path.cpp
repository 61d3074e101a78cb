#include "cli/hook_path.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace eacgm::cli {

Result<std::string> find_hook_library() {
  namespace fs = std::filesystem;
  if (const char* env = std::getenv("EACGM_HOOK"); env != nullptr && *env != '\0') {
    if (access(env, R_OK) != 0)
      return make_error(ErrorKind::kUsage, "EACGM_HOOK=" + std::string(env) + ": not a readable file");
    return std::string(env);
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& p : {self.parent_path() / "libeacgm_hook.so",
                              self.parent_path().parent_path() / "lib" / "eacgm" / "libeacgm_hook.so",
                              self.parent_path().parent_path() / "lib64" / "eacgm" / "libeacgm_hook.so"}) {
      if (access(p.c_str(), R_OK) == 0) return p.string();
    }
  }
  return make_error(ErrorKind::kUsage,
                    "--gpu-time: libeacgm_hook.so is neither beside the eacgm binary nor in ../lib/eacgm/ "
                    "(set EACGM_HOOK to its path)");
}

Status preload_hook_for_children(const std::string& hook, bool private_driver) {
  std::string preload = hook;
  if (const char* old = std::getenv("LD_PRELOAD"); old != nullptr && *old != '\0')
    preload += ":" + std::string(old);
  if (setenv("LD_PRELOAD", preload.c_str(), 1) != 0 || setenv("EACGM_GPU_TIME", "1", 1) != 0)
    return make_error("--gpu-time: cannot set the environment of the command");
  const char* dir = std::getenv("EACGM_PRIVATE_DRIVER");
  const bool named = dir != nullptr && *dir != '\0' && std::strcmp(dir, "0") != 0;
  if (private_driver && !named && setenv("EACGM_PRIVATE_DRIVER", "1", 1) != 0)
    return make_error("--private-driver: cannot set the environment of the command");
  return {};
}

}  // namespace eacgm::cli
