// CounterRegistry: declaration order, show rules of the accounting line, re-registration.
#include "core/counter_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace eacgm {
namespace {

CounterDef def(const char* key, CounterShow show, const char* group = "") {
  return CounterDef{key,  std::string("eacgm_") + key + "_total", "help", "", CounterKind::kCounter, show,
                    group};
}

TEST(CounterRegistry, AccountingLineFollowsDeclarationOrderAndShowRules) {
  CounterRegistry r;
  std::uint64_t events = 12, deep = 0, a = 0, b = 0, hidden = 7;
  r.add(def("events", CounterShow::kAlways), [&] { return events; });
  r.add(def("too_deep", CounterShow::kNonZero), [&] { return deep; });
  r.add(def("names_a", CounterShow::kGroup, "names"), [&] { return a; });
  r.add(def("names_b", CounterShow::kGroup, "names"), [&] { return b; });
  r.add(def("hints", CounterShow::kHidden), [&] { return hidden; });
  EXPECT_EQ(r.read().accounting_line(), "events=12");
  deep = 3;
  b = 1;
  EXPECT_EQ(r.read().accounting_line(), "events=12 too_deep=3 names_a=0 names_b=1");
  auto v = r.read();
  EXPECT_EQ(v.get("hints"), 7u);
  EXPECT_TRUE(v.has("hints"));
  EXPECT_FALSE(v.has("nothing"));
  EXPECT_EQ(v.get("nothing"), 0u);
  ASSERT_EQ(r.defs().size(), 5u);
  EXPECT_EQ(r.defs()[0]->metric, "eacgm_events_total");
}

TEST(CounterRegistry, SameKeyReplacesTheReaderAndKeepsItsPlace) {
  CounterRegistry r;
  r.add(def("x", CounterShow::kAlways), [] { return 1u; });
  r.add(def("y", CounterShow::kAlways), [] { return 2u; });
  r.add(def("x", CounterShow::kAlways), [] { return 5u; });
  EXPECT_EQ(r.read().accounting_line(), "x=5 y=2");
}

TEST(CounterRegistry, ReadsFromAnotherThreadWhileCountersMove) {
  CounterRegistry r;
  std::atomic<std::uint64_t> n{0};
  r.add(def("n", CounterShow::kAlways), [&] { return n.load(); });
  std::thread writer([&] {
    for (int i = 0; i < 100000; ++i) n.fetch_add(1, std::memory_order_relaxed);
  });
  std::uint64_t last = 0;
  for (int i = 0; i < 1000; ++i) {
    auto v = r.read().get("n");
    EXPECT_GE(v, last);
    last = v;
  }
  writer.join();
  EXPECT_EQ(r.read().get("n"), 100000u);
}

}  // namespace
}  // namespace eacgm
