// uprobe_multi links (Linux 6.6+): many uprobes of one file in one BPF link, so
// attach and detach cost one system call and one RCU grace period.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/result.h"

namespace eacgm::probe {

// BPF_TRACE_UPROBE_MULTI; newer than this build's uapi headers, so spelled out.
inline constexpr int kAttachUprobeMulti = 48;

// Creates the link and returns its fd. `ref_ctr_offsets` may be empty (no USDT
// semaphores); otherwise it has one entry per offset.
Result<int> create_uprobe_multi_link(int prog_fd, const std::string& path,
                                     std::span<const std::uint64_t> offsets,
                                     std::span<const std::uint64_t> cookies,
                                     std::span<const std::uint64_t> ref_ctr_offsets, bool retprobe);

}  // namespace eacgm::probe
