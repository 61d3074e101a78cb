// uprobe_multi links (Linux 6.6+): many uprobes of one file in one BPF link, so
// attach and detach cost one system call and one RCU grace period.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/result.h"
#include "core/unique_fd.h"

namespace eacgm::probe {

// BPF_TRACE_UPROBE_MULTI; newer than this build's uapi headers, so spelled out.
inline constexpr int kAttachUprobeMulti = 48;
// BPF_TRACE_UPROBE_SESSION (Linux 6.13+): the same link, one program at entry and return.
inline constexpr int kAttachUprobeSession = 57;

enum class MultiLinkKind : std::uint8_t { kEntry, kReturn, kSession };

// Creates the link and returns its fd, whose closing detaches it. `ref_ctr_offsets` may
// be empty (no USDT semaphores); otherwise it has one entry per offset. A non-zero `pid`
// limits the link to that process: the kernel writes its breakpoints into that process only.
Result<UniqueFd> create_uprobe_multi_link(int prog_fd, const std::string& path,
                                          std::span<const std::uint64_t> offsets,
                                          std::span<const std::uint64_t> cookies,
                                          std::span<const std::uint64_t> ref_ctr_offsets, MultiLinkKind kind,
                                          std::uint32_t pid = 0);

}  // namespace eacgm::probe
