// /proc/<pid>/maps parsing, strings read back from mapped files, and the cache of
// mappings of processes that may exit before their records are decoded.
#include "ingest/process_maps.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "core/proc_file.h"
#include "core/proc_maps.h"
#include "core/unique_fd.h"

namespace eacgm::ingest {

std::optional<ProcessMappings> read_process_mappings(std::uint32_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  std::string text;
  // A process that exits mid-read leaves what was read before.
  if (read_file_into(proc + "/maps", text) != 0 && text.empty()) return std::nullopt;
  ProcessMappings out;
  for (std::string_view rest = text; !rest.empty();) {
    const auto m = parse_maps_line(next_line(rest));
    if (!m || m->path.empty() || m->path[0] != '/' || m->path.ends_with(" (deleted)")) continue;
    std::string open_path = proc;  // through /proc/<pid>/root: the process's mount namespace
    open_path += "/root";
    open_path += m->path;
    out.push_back(FileMapping{m->start, m->end, m->offset, m->executable(), std::string(m->path),
                              std::move(open_path)});
  }
  return out;
}

std::optional<std::string> read_mapped_file_string(const ProcessMappings& maps, std::uint64_t addr,
                                                   std::size_t max_len) {
  auto m = std::find_if(maps.begin(), maps.end(),
                        [&](const FileMapping& f) { return addr >= f.start && addr < f.end; });
  if (m == maps.end()) return std::nullopt;
  // The process may be gone, and its /proc/<pid>/root with it: then the path as mapped.
  UniqueFd fd(::open(m->open_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) fd.reset(::open(m->path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::string out;
  std::array<char, 512> buf{};
  std::uint64_t at = addr - m->start + m->offset;
  const std::uint64_t mapping_end = m->end - m->start + m->offset;
  bool terminated = false;
  while (out.size() < max_len && at < mapping_end) {
    const std::size_t len = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), mapping_end - at));
    const ssize_t n = ::pread(fd.get(), buf.data(), len, static_cast<off_t>(at));
    if (n <= 0) break;
    const auto got = static_cast<std::size_t>(n);
    if (const void* nul = std::memchr(buf.data(), '\0', got)) {
      out.append(buf.data(), static_cast<const char*>(nul) - buf.data());
      terminated = true;
      break;
    }
    out.append(buf.data(), got);
    at += got;
  }
  if (!terminated && out.size() < max_len) return std::nullopt;  // ran off the file's mapped bytes
  if (out.size() > max_len) out.resize(max_len);
  return out;
}

void ProcessMapsCache::remember(std::uint32_t pid) {
  auto maps = read_process_mappings(pid);
  if (!maps) return;
  auto shared = std::make_shared<const ProcessMappings>(std::move(*maps));
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = maps_.find(pid); it != maps_.end()) {
    it->second = std::move(shared);
    return;
  }
  if (maps_.size() >= max_processes_ && !order_.empty()) {
    maps_.erase(order_.front());
    order_.pop_front();
  }
  maps_.emplace(pid, std::move(shared));
  order_.push_back(pid);
}

std::shared_ptr<const ProcessMappings> ProcessMapsCache::find(std::uint32_t pid) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = maps_.find(pid);
  return it == maps_.end() ? nullptr : it->second;
}

}  // namespace eacgm::ingest
