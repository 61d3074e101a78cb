// Test support: a ProbeInfo standing for a CUDA runtime function with an exit probe, by
// name, for tests that build CallEvents by hand.
#pragma once

#include <memory>

#include "core/call_event.h"

namespace eacgm::test {

inline std::shared_ptr<const ProbeInfo> cuda_probe(const char* function) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->spec.domain = "cuda";
  p->spec.with_exit = true;
  return p;
}

}  // namespace eacgm::test
