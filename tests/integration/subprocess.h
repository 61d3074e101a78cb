// Test support: runs eacgm and the test programs as real child processes, with
// stdout/stderr captured to files so tests can wait for lines as they appear.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace eacgm::test {

inline std::string bin(const std::string& name) { return std::string(EACGM_TEST_BIN_DIR) + "/" + name; }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string temp_dir() {
  char tmpl[] = "/tmp/eacgm-test-XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "/tmp";
}

class Subprocess {
 public:
  explicit Subprocess(const std::vector<std::string>& argv, const std::string& dir = temp_dir())
      : out_path_(dir + "/stdout." + std::to_string(counter()++)), err_path_(out_path_ + ".err") {
    pid_ = fork();
    if (pid_ == 0) {
      int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out, 1);
      dup2(err, 2);
      int devnull = open("/dev/null", O_RDONLY);
      dup2(devnull, 0);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(126);
    }
  }
  ~Subprocess() {
    if (!done_) {
      kill(pid_, SIGKILL);
      wait();
    }
  }
  pid_t pid() const { return pid_; }
  std::string out() const { return read_file(out_path_); }
  std::string err() const { return read_file(err_path_); }
  const std::string& out_path() const { return out_path_; }

  // Waits for the process; returns its exit code (128+signal when killed).
  int wait(std::chrono::seconds timeout = std::chrono::seconds(120)) {
    if (done_) return code_;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    done_ = true;
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return code_;
  }
  void signal(int sig) const { kill(pid_, sig); }

  // Waits until stdout (or stderr) contains `text`; false on timeout.
  bool wait_for(const std::string& text, bool in_stderr = false,
                std::chrono::milliseconds timeout = std::chrono::milliseconds(30000)) const {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      if ((in_stderr ? err() : out()).find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

 private:
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string out_path_, err_path_;
  pid_t pid_ = -1;
  bool done_ = false;
  int code_ = -1;
};

}  // namespace eacgm::test
