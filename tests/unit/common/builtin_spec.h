// Test support: a built-in spec, looked up by name in every catalog (a failure, and an
// empty spec, when no catalog has it).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "probe/catalog.h"

namespace eacgm::test {

inline const ProbeSpec& builtin_spec(const std::string& name) {
  for (const auto& c : probe::builtin_catalogs()) {
    for (const auto& s : c.specs) {
      if (s.name == name) return s;
    }
  }
  ADD_FAILURE() << "no built-in spec " << name;
  static const ProbeSpec none;
  return none;
}

}  // namespace eacgm::test
