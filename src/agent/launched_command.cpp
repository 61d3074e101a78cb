// Fork/exec with a start gate and exec-error reporting through a CLOEXEC pipe.
#include "agent/launched_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#include "core/gpu_time_ring.h"

extern char** environ;

namespace eacgm::agent {
namespace {

// eacgm's environment for the command, with this process named as the reader of the GPU-time
// ring of a hook in it (core/gpu_time_ring.h): another agent on the node leaves it alone.
std::vector<std::string> command_environment() {
  const std::string key = std::string(gpu_time::kReaderEnv) + "=";
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::string_view(*e).starts_with(key)) continue;
    env.emplace_back(*e);
  }
  env.push_back(key + std::to_string(getpid()));
  return env;
}

}  // namespace

Result<std::string> find_executable(const std::string& name, const std::string& search_path) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    if (executable(name)) return name;
    return make_error(fmt::format("command not found: {} (no such executable file)", name));
  }
  const std::string& dirs = search_path;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    if (executable(candidate)) return candidate;
    start = end + 1;
  }
  return make_error(fmt::format("command not found: {} (not on PATH)", name));
}

Result<LaunchedCommand> LaunchedCommand::spawn(const std::vector<std::string>& argv,
                                               const std::string& search_path, bool stdout_to_stderr) {
  if (argv.empty()) return make_error("no command given after --");
  auto exe = find_executable(argv[0], search_path);
  if (!exe) return std::move(exe).take_error();
  int gate[2], err[2];
  if (pipe2(gate, O_CLOEXEC) != 0) {
    const int e = errno;
    return make_errno_error(e, fmt::format("pipe: {}", std::strerror(e)));
  }
  UniqueFd gate_read(gate[0]), gate_write(gate[1]);
  if (pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    return make_errno_error(e, fmt::format("pipe: {}", std::strerror(e)));
  }
  UniqueFd error_read(err[0]), error_write(err[1]);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::vector<std::string> env_strings = command_environment();
  std::vector<char*> env;
  env.reserve(env_strings.size() + 1);
  for (const auto& e : env_strings) env.push_back(const_cast<char*>(e.c_str()));
  env.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    return make_errno_error(e, fmt::format("fork: {}", std::strerror(e)));
  }
  if (pid == 0) {
    // Between fork and exec only async-signal-safe calls; _exit runs no destructors.
    close(gate[1]);
    close(err[0]);
    char c;
    while (read(gate[0], &c, 1) < 0 && errno == EINTR) {
    }
    if (stdout_to_stderr) dup2(STDERR_FILENO, STDOUT_FILENO);
    execve(exe->c_str(), args.data(), env.data());
    int e = errno;
    (void)!write(err[1], &e, sizeof(e));
    _exit(127);
  }
  // The child's ends: with the parent's copy of the error pipe's write end closed, a
  // successful exec reads as EOF.
  gate_read.reset();
  error_write.reset();
  LaunchedCommand c;
  c.pid_ = pid;
  c.gate_fd_ = std::move(gate_write);
  c.error_fd_ = std::move(error_read);
  return c;
}

LaunchedCommand::LaunchedCommand(LaunchedCommand&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)),
      gate_fd_(std::move(o.gate_fd_)),
      error_fd_(std::move(o.error_fd_)),
      exited_(o.exited_),
      exit_code_(o.exit_code_) {}

LaunchedCommand::~LaunchedCommand() {
  gate_fd_.reset();
  error_fd_.reset();
  if (pid_ > 0 && !exited_) kill_and_reap();
}

Status LaunchedCommand::release() {
  gate_fd_.reset();
  int e = 0;
  ssize_t n;
  do {
    n = read(error_fd_.get(), &e, sizeof(e));
  } while (n < 0 && errno == EINTR);
  error_fd_.reset();
  if (n == sizeof(e)) {
    return make_errno_error(e, fmt::format("cannot run the command: {}", std::strerror(e)));
  }
  return {};
}

bool LaunchedCommand::poll_exit() {
  if (exited_) return true;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    exited_ = true;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return exited_;
}

void LaunchedCommand::kill_and_reap() {
  if (pid_ <= 0 || exited_) return;
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  exited_ = true;
  exit_code_ = 128 + SIGKILL;
}

}  // namespace eacgm::agent
