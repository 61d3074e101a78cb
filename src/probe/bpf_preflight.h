// Checks made before the BPF object is loaded, so that their failures read as what to do.
#pragma once

#include <cstdint>
#include <string>

#include "core/result.h"

namespace eacgm::probe {

// Whether a BPF object built for record ABI `object_version` matches this build's
// (EACGM_ABI_VERSION); a message naming both versions if not.
Status check_abi_version(std::uint32_t object_version);
// Whether this process may load BPF programs; an actionable message if not.
Status check_bpf_privileges();
// Whether the kernel exposes BTF (or a custom BTF file exists).
Status check_kernel_btf(const std::string& custom_path);

}  // namespace eacgm::probe
