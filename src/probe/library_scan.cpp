// Library discovery: reads /proc/<pid>/maps (file identity = what uprobes key on) and parses
// /etc/ld.so.cache directly, so finding libraries needs no subprocess on the normal path.
#include "probe/library_scan.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include "core/proc_file.h"

namespace eacgm::probe {
namespace {

struct MapsLine {
  std::string_view path;
  std::uint64_t dev = 0;
  std::uint64_t inode = 0;
  bool deleted = false;
};

// "start-end perms offset major:minor inode   path"; only executable file mappings.
std::optional<MapsLine> parse_exec_mapping(std::string_view line) {
  next_field(line);  // address range
  const std::string_view perms = next_field(line);
  if (perms.size() < 3 || perms[2] != 'x') {
    return std::nullopt;
  }
  next_field(line);  // offset
  const std::string_view dev = next_field(line);
  const std::string_view inode_text = next_field(line);
  const std::size_t path_start = line.find_first_not_of(' ');
  if (path_start == std::string_view::npos) {
    return std::nullopt;  // anonymous
  }
  MapsLine out;
  out.path = line.substr(path_start);
  if (out.path.front() != '/') {
    return std::nullopt;  // [vdso], memfd
  }
  if (out.path.ends_with(" (deleted)")) {
    out.deleted = true;  // replaced or removed on disk: in use, nothing to attach to
    out.path.remove_suffix(std::string_view(" (deleted)").size());
  }
  const std::size_t colon = dev.find(':');
  unsigned major_num = 0;
  unsigned minor_num = 0;
  if (colon == std::string_view::npos || !parse_number(dev.substr(0, colon), major_num, 16) ||
      !parse_number(dev.substr(colon + 1), minor_num, 16) || !parse_number(inode_text, out.inode, 10) ||
      out.inode == 0) {
    return std::nullopt;
  }
  out.dev = makedev(major_num, minor_num);
  return out;
}

std::string read_link(const std::string& path) {
  std::array<char, 256> buf{};
  const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size() - 1);
  return n > 0 ? std::string(buf.data(), static_cast<std::size_t>(n)) : std::string();
}

std::vector<int> all_pids() {
  std::vector<int> pids;
  const std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir("/proc"), &::closedir);
  if (!dir) {
    return pids;
  }
  while (const dirent* entry = ::readdir(dir.get())) {
    int pid = 0;
    if (parse_number(std::string_view(entry->d_name), pid, 10) && pid > 0) {
      pids.push_back(pid);
    }
  }
  return pids;
}

// `ldconfig -p` lines: "\tlibc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6".
Result<std::vector<CachedLibrary>> run_ldconfig() {
  const std::unique_ptr<FILE, int (*)(FILE*)> pipe(
      ::popen("PATH=\"$PATH:/sbin:/usr/sbin\" ldconfig -p 2>/dev/null", "re"), &::pclose);
  if (!pipe) {
    const int err = errno;
    return make_errno_error(err, std::string("cannot run ldconfig -p: ") + std::strerror(err));
  }
  std::vector<CachedLibrary> out;
  std::array<char, 4096> line{};
  while (std::fgets(line.data(), static_cast<int>(line.size()), pipe.get()) != nullptr) {
    std::string_view l(line.data());
    if (l.empty() || l.front() != '\t') {
      continue;  // the "N libs found in cache" header
    }
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) {
      l.remove_suffix(1);
    }
    const std::size_t arrow = l.find(" => ");
    const std::size_t paren = l.find(" (");
    if (arrow == std::string_view::npos || paren == std::string_view::npos || paren > arrow) {
      continue;
    }
    out.push_back(CachedLibrary{std::string(l.substr(1, paren - 1)), std::string(l.substr(arrow + 4)), -1});
  }
  if (out.empty()) {
    return make_error("ldconfig -p listed no libraries");
  }
  return out;
}

}  // namespace

MapsScan scan_maps(const std::vector<int>& pids) {
  MapsScan scan;
  const std::vector<int> targets = pids.empty() ? all_pids() : pids;
  const std::string own_mnt_ns = read_link("/proc/self/ns/mnt");
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> by_identity;
  int denied = 0;
  int first_denied = 0;
  int first_denied_errno = 0;
  std::string text;
  for (const int pid : targets) {
    const std::string proc = "/proc/" + std::to_string(pid);
    const int err = read_file_into(proc + "/maps", text);
    if (err == ENOENT || err == ESRCH) {
      continue;  // exited between listing and reading
    }
    if (err == EACCES || err == EPERM) {
      if (denied++ == 0) {
        first_denied = pid;
        first_denied_errno = err;
      }
      continue;
    }
    if (err != 0) {
      scan.warnings.push_back("cannot read " + proc + "/maps: " + std::strerror(err));
      continue;
    }
    // A process in another mount namespace sees other files under the same path; its root
    // link reaches them from ours.
    const std::string mnt_ns = read_link(proc + "/ns/mnt");
    const bool foreign_ns = !mnt_ns.empty() && !own_mnt_ns.empty() && mnt_ns != own_mnt_ns;
    std::string_view rest(text);
    while (!rest.empty()) {
      const std::size_t eol = rest.find('\n');
      const std::string_view line = rest.substr(0, eol);
      rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
      const auto m = parse_exec_mapping(line);
      if (!m) {
        continue;
      }
      const auto key = std::make_pair(m->dev, m->inode);
      scan.mapped.insert(key);
      if (m->deleted) {
        continue;
      }
      if (auto it = by_identity.find(key); it != by_identity.end()) {
        std::vector<int>& owners = scan.files[it->second].pids;
        if (owners.back() != pid) {
          owners.push_back(pid);
        }
        continue;
      }
      MappedFile file;
      file.path.assign(m->path);
      file.open_path = foreign_ns ? proc + "/root" + file.path : file.path;
      file.dev = m->dev;
      file.inode = m->inode;
      struct stat st {};
      if (::stat(file.open_path.c_str(), &st) == 0) {
        if (!S_ISREG(st.st_mode)) {
          continue;  // e.g. an executable mapping of a device node
        }
      } else if (errno == ENOENT) {
        continue;  // gone from the path since it was mapped
      }
      file.pids.push_back(pid);
      by_identity.emplace(key, scan.files.size());
      scan.files.push_back(std::move(file));
    }
  }
  if (denied > 0) {
    scan.warnings.push_back(maps_denied_warning(denied, first_denied, first_denied_errno, ::geteuid() == 0));
  }
  return scan;
}

std::string maps_denied_warning(int denied, int first_pid, int err, bool as_root) {
  std::string out = "cannot read /proc/<pid>/maps of " + std::to_string(denied) +
                    " process(es) (first: pid " + std::to_string(first_pid) + "): " + std::strerror(err) +
                    " (" +
                    (err == EPERM    ? "EPERM"
                     : err == EACCES ? "EACCES"
                                     : "errno " + std::to_string(err)) +
                    ")";
  if (as_root) {
    // Root is refused by the kernel's ptrace access check, not by file permissions.
    out +=
        ": the ptrace access check refused root (no CAP_SYS_PTRACE: docker run --cap-add SYS_PTRACE; "
        "not dumpable; Yama/AppArmor/SELinux)";
  } else {
    out += ": another user's process; run as root or with CAP_SYS_PTRACE";
  }
  out += ", or another PID namespace, a kernel thread, exited: libraries not probed";
  return out;
}

std::vector<MappedFile> scan_pid_maps(int pid) { return scan_maps({pid}).files; }

Result<std::vector<CachedLibrary>> ld_cache_libraries(const std::string& cache_path) {
  std::string text;
  const int err = read_file_into(cache_path, text);
  std::string why;
  if (err != 0) {
    why = "cannot read " + cache_path + ": " + std::strerror(err);
  } else {
    auto parsed = parse_ld_cache(
        std::span<const unsigned char>(reinterpret_cast<const unsigned char*>(text.data()), text.size()));
    if (parsed) {
      return parsed;
    }
    why = cache_path + ": " + parsed.error();
  }
  auto listed = run_ldconfig();
  if (listed) {
    return listed;
  }
  return make_error(why + "; and " + listed.error() +
                    " (run ldconfig as root to rebuild the cache, or name library paths in the config)");
}

Result<std::pair<std::uint64_t, std::uint64_t>> file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return make_errno_error(err, "cannot stat " + path + ": " + std::strerror(err));
  }
  // Re-encode through major/minor so the value matches what parse_exec_mapping builds from maps.
  return std::make_pair(static_cast<std::uint64_t>(makedev(major(st.st_dev), minor(st.st_dev))),
                        static_cast<std::uint64_t>(st.st_ino));
}

}  // namespace eacgm::probe
