// The host-wait table against the built-in catalogs: every function it names is probed
// (so a catalog rename cannot silently drop a wait kind), and in always-on mode every
// kind still reaches the analysis through an attached layer.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "core/host_wait_kinds.h"
#include "probe/always_on.h"
#include "probe/catalog.h"

namespace eacgm {
namespace {

TEST(HostWaitCatalog, EveryFunctionOfTheTableIsABuiltInProbe) {
  std::set<std::string> specs;
  for (const auto& c : probe::builtin_catalogs()) {
    for (const auto& s : c.specs) specs.insert(s.name);
  }
  // Not in the driver catalog (the runtime's cudaEventSynchronize is): for user specs.
  const std::set<std::string> not_probed = {"cuEventSynchronize"};
  for (const auto& [name, kind] : host_wait_functions()) {
    const std::string n(name);
    if (not_probed.count(n)) continue;
    EXPECT_TRUE(specs.count(n) || specs.count(n + "_v2")) << n << " (" << host_wait_kind_name(kind) << ")";
  }
}

TEST(HostWaitCatalog, AlwaysOnKeepsALayerOfEveryWaitingCall) {
  std::map<HostWaitKind, std::set<std::string>> attached, skipped;
  for (const auto& c : probe::builtin_catalogs()) {
    for (const auto& s : c.specs) {
      const auto kind = wait_kind_of_function(s.name);
      if (!kind) continue;
      (probe::always_on_role(s) == AlwaysOn::kSkip ? skipped : attached)[*kind].insert(s.name);
    }
  }
  // A runtime call left out in always-on mode is seen through the driver call it makes.
  for (const auto& [kind, names] : skipped) {
    EXPECT_FALSE(attached[kind].empty()) << host_wait_kind_name(kind) << ": " << *names.begin();
  }
  for (auto kind : {HostWaitKind::kStreamSync, HostWaitKind::kEventSync, HostWaitKind::kDeviceSync,
                    HostWaitKind::kBlockingCopy, HostWaitKind::kNccl}) {
    EXPECT_FALSE(attached[kind].empty()) << host_wait_kind_name(kind);
  }
}

}  // namespace
}  // namespace eacgm
