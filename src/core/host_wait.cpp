// Names of the host-wait kinds.
#include "core/host_wait.h"

#include <array>

namespace eacgm {
namespace {
constexpr std::array<std::string_view, kHostWaitKinds> kNames = {
    "stream_sync", "event_sync", "device_sync", "blocking_copy", "nccl", "futex", "input_wait"};
}

std::string_view host_wait_kind_name(HostWaitKind kind) { return kNames.at(static_cast<std::size_t>(kind)); }

std::optional<HostWaitKind> parse_host_wait_kind(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<HostWaitKind>(i);
  }
  return std::nullopt;
}

}  // namespace eacgm
