// What loading BPF needs, checked before libbpf is asked: the object's record ABI, the
// privileges and the kernel's BTF, each failure said as what to do.
#include "probe/bpf_preflight.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <string_view>

#include "bpf/events.h"
#include "core/proc_file.h"
#include "probe/libbpf_log.h"

namespace eacgm::probe {
namespace {

std::uint64_t capability_mask() {
  const std::string status = read_small_file("/proc/self/status").value_or("");
  std::string_view value = line_after(status, "CapEff:").value_or("");
  std::uint64_t mask = 0;
  parse_number(next_field(value), mask, 16);
  return mask;
}

}  // namespace

Status check_abi_version(std::uint32_t object_version) {
  if (object_version == EACGM_ABI_VERSION) return {};
  return make_error(
      fmt::format("eacgm's BPF object was built for record ABI version {}, but this eacgm reads version {}: "
                  "the embedded object is stale; rebuild eacgm from one source tree",
                  object_version, EACGM_ABI_VERSION));
}

Status check_bpf_privileges() {
  constexpr int kCapSysAdmin = 21, kCapPerfmon = 38, kCapBpf = 39;
  std::uint64_t caps = capability_mask();
  auto has = [caps](int cap) { return (caps >> cap) & 1; };
  if (has(kCapSysAdmin) || (has(kCapBpf) && has(kCapPerfmon))) return {};
  return make_errno_error(
      EPERM, "tracing needs root (or the CAP_BPF and CAP_PERFMON capabilities): run eacgm with sudo");
}

Status check_kernel_btf(const std::string& custom_path) {
  const std::string path = custom_path.empty() ? "/sys/kernel/btf/vmlinux" : custom_path;
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) return {};
  const int err = errno;
  if (custom_path.empty()) {
    return make_errno_error(
        err,
        "this kernel exposes no BTF type information (/sys/kernel/btf/vmlinux is missing): "
        "use a kernel built with CONFIG_DEBUG_INFO_BTF=y, or pass --btf FILE with this kernel's BTF");
  }
  return make_errno_error(
      err, fmt::format("cannot read BTF file {}: {} (check the --btf path)", path, errno_text(err)));
}

}  // namespace eacgm::probe
