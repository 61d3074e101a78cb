// Test support: a ProbeInfo for a built-in spec, looked up by name in every catalog.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "core/call_event.h"
#include "probe/catalog.h"

namespace eacgm::test {

inline std::shared_ptr<const ProbeInfo> builtin_probe(const std::string& name) {
  for (const auto& c : probe::builtin_catalogs()) {
    for (const auto& s : c.specs) {
      if (s.name == name) {
        auto p = std::make_shared<ProbeInfo>();
        p->function = name;
        p->spec = s;
        return p;
      }
    }
  }
  ADD_FAILURE() << "no built-in probe " << name;
  return nullptr;
}

}  // namespace eacgm::test
