// The BPF_LINK_CREATE call for uprobe_multi, with the kernel's attr layout.
#include "probe/uprobe_multi.h"

#include <fmt/format.h>
#include <linux/bpf.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace eacgm::probe {
namespace {

constexpr std::uint32_t kUprobeMultiReturn = 1;  // BPF_F_UPROBE_MULTI_RETURN

// link_create's uprobe_multi member, as in the kernel's union bpf_attr.
struct UprobeMultiLinkAttr {
  std::uint32_t prog_fd;
  std::uint32_t target_fd;
  std::uint32_t attach_type;
  std::uint32_t flags;
  std::uint64_t path;
  std::uint64_t offsets;
  std::uint64_t ref_ctr_offsets;
  std::uint64_t cookies;
  std::uint32_t cnt;
  std::uint32_t multi_flags;
  std::uint32_t pid;
  std::uint32_t pad;
};
static_assert(sizeof(UprobeMultiLinkAttr) == 64);

}  // namespace

Result<UniqueFd> create_uprobe_multi_link(int prog_fd, const std::string& path,
                                          std::span<const std::uint64_t> offsets,
                                          std::span<const std::uint64_t> cookies,
                                          std::span<const std::uint64_t> ref_ctr_offsets, MultiLinkKind kind,
                                          std::uint32_t pid) {
  if (offsets.size() != cookies.size() ||
      (!ref_ctr_offsets.empty() && ref_ctr_offsets.size() != offsets.size())) {
    return make_error("uprobe_multi: offsets, cookies and semaphores differ in count");
  }
  UprobeMultiLinkAttr attr{};
  attr.prog_fd = static_cast<std::uint32_t>(prog_fd);
  attr.attach_type = kind == MultiLinkKind::kSession ? kAttachUprobeSession : kAttachUprobeMulti;
  attr.path = reinterpret_cast<std::uintptr_t>(path.c_str());
  attr.offsets = reinterpret_cast<std::uintptr_t>(offsets.data());
  attr.cookies = reinterpret_cast<std::uintptr_t>(cookies.data());
  attr.ref_ctr_offsets =
      ref_ctr_offsets.empty() ? 0 : reinterpret_cast<std::uintptr_t>(ref_ctr_offsets.data());
  attr.cnt = static_cast<std::uint32_t>(offsets.size());
  attr.multi_flags = kind == MultiLinkKind::kReturn ? kUprobeMultiReturn : 0;
  attr.pid = pid;
  long fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
  if (fd < 0) {
    const char* what = kind == MultiLinkKind::kReturn    ? "uretprobe_multi"
                       : kind == MultiLinkKind::kSession ? "uprobe session"
                                                         : "uprobe_multi";
    const int err = errno;
    return make_errno_error(
        err, fmt::format("{} of {} probes in {}: {}", what, offsets.size(), path, std::strerror(err)));
  }
  return UniqueFd(static_cast<int>(fd));
}

}  // namespace eacgm::probe
