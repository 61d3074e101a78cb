// Warnings for user probes whose library pattern matched no file: a typo in `library`
// must not trace nothing in silence ("0 probes in 0 library files", exit 0).
#include <gtest/gtest.h>

#include "probe/attacher.h"

namespace eacgm::probe {
namespace {

ProbeSpec user_spec(const std::string& name, const std::string& library) {
  ProbeSpec s;
  s.name = name;
  s.library = library;
  s.symbol = name;
  s.domain = "user";
  return s;
}

TEST(UnmatchedLibraryWarnings, OnlySpecsWhoseLibraryMatchedNothing) {
  const std::vector<ProbeSpec> specs = {user_spec("x", "libnotthere.so*"), user_spec("attached", "libc.so*"),
                                        user_spec("typo_symbol", "libm.so*"),
                                        user_spec("no_symbols", "libz.so*")};
  AttachStats stats;
  stats.resolved_specs = {"attached"};
  stats.unresolved_in = {{"typo_symbol", "/usr/lib/libm.so.6"}};  // reported apart, as a bad symbol
  stats.library_matched = {"attached", "typo_symbol", "no_symbols"};
  const auto whole = unmatched_library_warnings(specs, stats, TraceScope::kWholeMachine);
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_EQ(whole[0],
            "probe \"x\": no library matching \"libnotthere.so*\" is loaded or in the loader cache; "
            "whole-machine mode keeps waiting for it");
  const auto targets = unmatched_library_warnings(specs, stats, TraceScope::kTargets);
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0].rfind(
                "probe \"x\": no library matching \"libnotthere.so*\" is loaded or in the loader cache; "
                "it is attached if a traced process loads one later",
                0),
            0u)
      << targets[0];
}

TEST(UnmatchedLibraryWarnings, NoneWhenEverythingMatchedOrNoUserSpecs) {
  AttachStats stats;
  EXPECT_TRUE(unmatched_library_warnings({}, stats, TraceScope::kWholeMachine).empty());
  stats.library_matched = {"a", "b"};
  EXPECT_TRUE(unmatched_library_warnings({user_spec("a", "liba.so*"), user_spec("b", "libb.so*")}, stats,
                                         TraceScope::kTargets)
                  .empty());
}

}  // namespace
}  // namespace eacgm::probe
