// Where libeacgm_hook.so is, for `eacgm run --gpu-time`: $EACGM_HOOK, else beside the
// eacgm binary (a build tree), else ../lib/eacgm/ from it (`make install`).
#pragma once

#include <string>

#include "core/result.h"

namespace eacgm::cli {

Result<std::string> find_hook_library();

// Sets what a launched command inherits to carry the hook with GPU time on:
// LD_PRELOAD (the hook first, the rest kept) and EACGM_GPU_TIME=1; with
// `private_driver`, EACGM_PRIVATE_DRIVER too (its folder as the environment names it,
// else 1: /dev/shm).
Status preload_hook_for_children(const std::string& hook, bool private_driver);

}  // namespace eacgm::cli
