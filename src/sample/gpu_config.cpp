// [gpu]'s keys and the sampling period's range.
#include "sample/gpu_config.h"

#include <string_view>

#include "core/config_reader.h"

namespace eacgm::sample {
namespace {

Status read_gpu(const ConfigTable& table, GpuConfig& gpu) {
  constexpr std::string_view kKeys[] = {"interval_s", "sample", "profiling"};
  if (auto s = table.check_keys(kKeys); !s) return s;
  if (auto s = table.read_bool("sample", gpu.sample); !s) return s;
  if (auto s = table.read_bool("profiling", gpu.profiling); !s) return s;
  return table.read_number("interval_s", 0.01, 3600, gpu.interval_s);
}

}  // namespace

void add_gpu_section(ConfigSections& sections, GpuConfig& gpu) { sections.add_table<read_gpu>("gpu", gpu); }

}  // namespace eacgm::sample
