// A throwaway PostgreSQL server for tests: Debian's server binaries (the newest
// /usr/lib/postgresql/<version>/bin), run as an unprivileged user (the tests run as
// root; PostgreSQL refuses root) from a temporary directory: its data directory (a copy
// of one `initdb` made once, kept in /tmp for the next tests), a Unix socket for the
// superuser and a random TCP port on 127.0.0.1 where a user with a password logs in. The
// destructor stops the server and removes the directory. Missing binaries are an error:
// scripts/setup.sh installs them.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace eacgm::history::test {

class PgCluster {
 public:
  static constexpr const char* kUser = "eacgm";
  static constexpr const char* kPassword = "Pw-9f3e-only-in-tests";

  PgCluster() = default;
  PgCluster(const PgCluster&) = delete;
  PgCluster& operator=(const PgCluster&) = delete;
  ~PgCluster() {
    if (!dir_.empty()) {
      if (running_) (void)run_as_owner({bin_ + "/pg_ctl", "-D", data(), "-m", "immediate", "-w", "stop"});
      std::filesystem::remove_all(dir_);
    }
  }

  // Empty on success, else what went wrong (with the server's log when it started).
  std::string start() {
    bin_ = find_bin();
    if (bin_.empty()) {
      return "no PostgreSQL server under /usr/lib/postgresql/<version>/bin (scripts/setup.sh installs "
             "Debian's "
             "postgresql)";
    }
    char tmpl[] = "/tmp/eacgm-pg-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return "mkdtemp failed";
    dir_ = tmpl;
    if (geteuid() == 0) {
      const passwd* pw = getpwnam("nobody");
      if (pw == nullptr) return "no user nobody to run the server as";
      uid_ = pw->pw_uid;
      gid_ = pw->pw_gid;
      if (chown(dir_.c_str(), uid_, gid_) != 0) return "chown " + dir_ + " failed";
    }
    port_ = free_port();
    auto made = data_template();
    if (!made.first.empty()) return made.first;
    auto [rc, out] = run({"/bin/cp", "-a", made.second, data()}, false);
    if (rc != 0) return "copying " + made.second + " failed: " + out;
    if (auto err = start_server(); !err.empty()) return err;
    if (auto err =
            admin("postgres", std::string("CREATE ROLE ") + kUser + " LOGIN PASSWORD '" + kPassword + "'");
        !err.empty()) {
      return err;
    }
    return {};
  }

  // A new, empty database owned by the test user; empty on success.
  std::string create_database(const std::string& name) {
    return admin("postgres", "CREATE DATABASE " + name + " OWNER " + kUser);
  }
  // The store URL of a database, with the password.
  std::string url(const std::string& db) const {
    return std::string("postgresql://") + kUser + ":" + kPassword + "@127.0.0.1:" + std::to_string(port_) +
           "/" + db;
  }
  int port() const { return port_; }

  // Runs SQL as the superuser over the socket; empty on success, else psql's output.
  std::string admin(const std::string& db, const std::string& sql) {
    auto [rc, out] = psql(db, sql);
    return rc == 0 ? std::string() : "psql: " + out;
  }
  // The rows a query answers, one per line, columns separated by '|'.
  std::pair<int, std::string> psql(const std::string& db, const std::string& sql) {
    return run({bin_ + "/psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", "-h", dir_, "-p",
                std::to_string(port_), "-U", "postgres", "-d", db, "-c", sql},
               false);
  }

  // The server away (a fast shutdown, as an administrator's) and back on the same port.
  std::string stop() {
    auto [rc, out] = run_as_owner({bin_ + "/pg_ctl", "-D", data(), "-m", "fast", "-w", "stop"});
    if (rc != 0) return "pg_ctl stop failed: " + out;
    running_ = false;
    return {};
  }
  std::string start_server() {
    auto [rc, out] = run_as_owner(
        {bin_ + "/pg_ctl", "-D", data(), "-l", dir_ + "/server.log", "-w", "-t", "60", "-o",
         "-k " + dir_ + " -p " + std::to_string(port_) + " -c listen_addresses=127.0.0.1 -c fsync=off",
         "start"});
    if (rc != 0) return "pg_ctl start failed: " + out + "\n" + log();
    running_ = true;
    return {};
  }
  std::string log() const {
    std::ifstream in(dir_ + "/server.log");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

 private:
  std::string data() const { return dir_ + "/data"; }

  // An initdb'ed data directory, made once per version and user and copied for each
  // server (initdb takes seconds; a copy a fraction of one): an error, or its path.
  std::pair<std::string, std::string> data_template() {
    const std::string version = std::filesystem::path(bin_).parent_path().filename().string();
    const std::string kept = "/tmp/eacgm-pg-template-" + version + "-" + std::to_string(geteuid());
    if (access((kept + "/data/PG_VERSION").c_str(), F_OK) == 0) return {{}, kept + "/data"};
    char tmpl[] = "/tmp/eacgm-pg-making-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return {"mkdtemp failed", {}};
    const std::string making = tmpl;
    if (uid_ != 0 && chown(making.c_str(), uid_, gid_) != 0) return {"chown " + making + " failed", {}};
    auto [rc, out] =
        run_as_owner({bin_ + "/initdb", "-D", making + "/data", "-U", "postgres", "--auth-local=trust",
                      "--auth-host=scram-sha-256", "--locale=C", "--encoding=UTF8", "--no-sync"});
    if (rc != 0) {
      std::filesystem::remove_all(making);
      return {"initdb failed: " + out, {}};
    }
    // Another test process may have made it meanwhile: the first one stays.
    if (std::rename(making.c_str(), kept.c_str()) != 0) std::filesystem::remove_all(making);
    if (access((kept + "/data/PG_VERSION").c_str(), F_OK) != 0)
      return {kept + " is not a data directory", {}};
    return {{}, kept + "/data"};
  }

  // The newest version's bin directory under /usr/lib/postgresql.
  static std::string find_bin() {
    std::error_code ec;
    int best = -1;
    std::string found;
    for (const auto& e : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::string v = e.path().filename().string();
      if (v.empty() || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
        continue;
      const std::string bin = e.path().string() + "/bin";
      if (std::stoi(v) > best && access((bin + "/initdb").c_str(), X_OK) == 0 &&
          access((bin + "/psql").c_str(), X_OK) == 0) {
        best = std::stoi(v);
        found = bin;
      }
    }
    return found;
  }

  static int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    (void)::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
    socklen_t len = sizeof(a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
  }

  std::pair<int, std::string> run_as_owner(const std::vector<std::string>& argv) { return run(argv, true); }

  // Runs a program to its end (as the directory's owner when `drop`); its exit code and
  // output.
  std::pair<int, std::string> run(const std::vector<std::string>& argv, bool drop) {
    const std::string out_path = dir_ + "/cmd." + std::to_string(++commands_) + ".out";
    const pid_t pid = fork();
    if (pid == 0) {
      const int fd = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      const int devnull = ::open("/dev/null", O_RDONLY);
      dup2(devnull, 0);
      if (chdir(dir_.c_str()) != 0) _exit(125);
      if (drop && uid_ != 0 && (setgroups(0, nullptr) != 0 || setgid(gid_) != 0 || setuid(uid_) != 0))
        _exit(125);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(126);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    std::ifstream in(out_path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::filesystem::remove(out_path);
    std::string out = ss.str();
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
  }

  std::string bin_;
  std::string dir_;
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  int port_ = 0;
  int commands_ = 0;
  bool running_ = false;
};

}  // namespace eacgm::history::test
