// The cgroup v2 subtree a trace is limited to (sample/cgroup_scope.h).
#include "sample/cgroup_scope.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/proc_file.h"

namespace eacgm::sample {
namespace {

// "/a//b/" -> "/a/b"; "" and "/" -> "/".
std::string normal_path(std::string_view p) {
  std::string out;
  while (!p.empty()) {
    const std::size_t slash = p.find('/');
    const std::string_view part = p.substr(0, slash);
    if (!part.empty() && part != ".") out += "/" + std::string(part);
    if (slash == std::string_view::npos) break;
    p.remove_prefix(slash + 1);
  }
  return out.empty() ? "/" : out;
}

}  // namespace

Result<std::string> cgroup2_mount(std::string_view mounts) {
  while (!mounts.empty()) {
    std::string_view line = next_line(mounts);
    next_field(line);  // the source
    const std::string_view dir = next_field(line);
    if (next_field(line) == "cgroup2") return std::string(dir);
  }
  return make_error(
      "no cgroup v2 hierarchy is mounted (/proc/self/mounts lists no cgroup2): [trace] cgroup needs "
      "one (mount -t cgroup2 none /sys/fs/cgroup/unified, or boot with systemd.unified_cgroup_hierarchy=1)");
}

std::optional<std::string> process_cgroup(std::uint32_t pid, const std::string& proc_root) {
  auto text = read_small_file(fmt::format("{}/{}/cgroup", proc_root, pid));
  if (!text) return std::nullopt;
  std::string_view rest = *text;
  while (!rest.empty()) {
    const std::string_view line = next_line(rest);
    if (line.starts_with("0::")) return std::string(line.substr(3));
  }
  return std::nullopt;
}

bool cgroup_within(std::string_view path, std::string_view scope) {
  if (scope == "/") return true;
  return path.starts_with(scope) && (path.size() == scope.size() || path[scope.size()] == '/');
}

Result<CgroupScope> CgroupScope::open(const std::string& where, const std::string& proc_root) {
  if (where.empty()) return make_error("[trace] cgroup is empty: name a cgroup v2 path such as \"/node-a\"");
  auto mounts = read_small_file(proc_root + "/self/mounts", 1 << 20);
  if (!mounts)
    return make_error(fmt::format("cannot read {}/self/mounts to find the cgroup v2 hierarchy", proc_root));
  auto mount = cgroup2_mount(*mounts);
  if (!mount) return std::move(mount).take_error();
  const std::string root = normal_path(*mount);
  const std::string given = normal_path(where);
  CgroupScope s;
  // A directory of the hierarchy, or a path inside it.
  if (cgroup_within(given, root) && root != "/") {
    s.path_ = normal_path(given.substr(root.size()));
  } else {
    s.path_ = given;
  }
  s.directory_ = s.path_ == "/" ? root : root + s.path_;
  s.proc_root_ = proc_root;
  s.fd_ = UniqueFd(::open(s.directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!s.fd_) {
    const int err = errno;
    return make_errno_error(err, fmt::format("[trace] cgroup \"{}\": cannot open {}: {} (create the cgroup "
                                             "first, or name one that /proc/PID/cgroup shows)",
                                             where, s.directory_, std::strerror(err)));
  }
  struct stat st {};
  if (::fstatat(s.fd_.get(), "cgroup.procs", &st, 0) != 0) {
    return make_error(fmt::format("[trace] cgroup \"{}\": {} is not a cgroup v2 directory (no cgroup.procs)",
                                  where, s.directory_));
  }
  return s;
}

bool CgroupScope::contains(std::uint32_t pid) const {
  const auto cg = process_cgroup(pid, proc_root_);
  return cg && cgroup_within(*cg, path_);
}

}  // namespace eacgm::sample
