// Test support: one shared ProbeInfo standing for the runtime's cudaMalloc (domain cuda,
// an int32 result code), for tests that build CallEvents by hand.
#pragma once

#include <memory>

#include "core/call_event.h"

namespace eacgm::test {

inline const std::shared_ptr<const ProbeInfo>& cuda_malloc_probe() {
  static const std::shared_ptr<const ProbeInfo> probe = [] {
    auto p = std::make_shared<ProbeInfo>();
    p->function = "cudaMalloc";
    p->spec.domain = "cuda";
    p->spec.ret = ReturnKind::kInt32;
    return std::shared_ptr<const ProbeInfo>(std::move(p));
  }();
  return probe;
}

}  // namespace eacgm::test
