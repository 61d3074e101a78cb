// Container ids of processes, for the API's process list.
#include "sample/container_id.h"

#include <fstream>
#include <sstream>

#include "sample/process_sampler.h"

namespace eacgm::sample {

std::optional<std::string> read_container_id(std::uint32_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  std::string id = container_id_from_cgroup(text.str());
  if (id.empty()) return std::nullopt;
  return id;
}

}  // namespace eacgm::sample
