// `-- CMD ARGS...`: a child started stopped at a gate, so eacgm can add it to the
// filter and attach before it runs a single instruction of CMD.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/result.h"
#include "core/unique_fd.h"

namespace eacgm::agent {

class LaunchedCommand {
 public:
  // Forks; the child waits for release() before exec. Fails if CMD is not found on
  // `search_path` (find_executable). `stdout_to_stderr`: the command writes its standard
  // output to eacgm's standard error (when eacgm's own standard output carries the event
  // stream).
  static Result<LaunchedCommand> spawn(const std::vector<std::string>& argv, const std::string& search_path,
                                       bool stdout_to_stderr = false);
  LaunchedCommand(LaunchedCommand&& o) noexcept;
  LaunchedCommand& operator=(LaunchedCommand&&) = delete;
  ~LaunchedCommand();

  pid_t pid() const { return pid_; }
  // Lets the child exec; an exec failure comes back as an error.
  Status release();
  // Non-blocking: true once the child has exited; exit_code() is then valid.
  bool poll_exit();
  int exit_code() const { return exit_code_; }
  void kill_and_reap();

 private:
  LaunchedCommand() = default;
  pid_t pid_ = -1;
  UniqueFd gate_fd_;   // write end: closing it releases the child
  UniqueFd error_fd_;  // read end: errno of a failed exec, or EOF on success
  bool exited_ = false;
  int exit_code_ = 0;
};

// Where a command is looked for when PATH is not set (execvp's own choice differs by libc).
inline constexpr const char* kDefaultSearchPath = "/usr/local/bin:/usr/bin:/bin";

// Finds CMD as execvp would: as given when it holds a '/', else in the folders of
// `search_path` ($PATH, colon-separated; an empty entry is the current folder); an error
// if it is not there.
Result<std::string> find_executable(const std::string& name, const std::string& search_path);

}  // namespace eacgm::agent
