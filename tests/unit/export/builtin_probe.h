// Test support: a ProbeInfo for a built-in spec, looked up by name in every catalog.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "../common/builtin_spec.h"
#include "core/call_event.h"

namespace eacgm::test {

inline std::shared_ptr<const ProbeInfo> builtin_probe(const std::string& name) {
  const ProbeSpec& s = builtin_spec(name);
  if (s.name.empty()) return nullptr;  // builtin_spec reported it
  auto p = std::make_shared<ProbeInfo>();
  p->function = name;
  p->spec = s;
  return p;
}

}  // namespace eacgm::test
