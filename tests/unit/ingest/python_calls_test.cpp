// Python entry/return pairing: recursion, exceptions (returns without their entries'
// order disturbed), lost records, threads, the depth cap and the file filter.
#include "ingest/python_calls.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "probe/catalog.h"

namespace eacgm::ingest {
namespace {

struct Call {
  std::string name;
  std::string file;
  std::int64_t line;
  bool timed;
  std::uint64_t ts_ns;
  std::uint64_t dur_ns;
  std::uint32_t tid;
};

std::shared_ptr<const ProbeInfo> raw_probe(const char* spec_name) {
  ProbeInfo info;
  for (const auto& c : probe::builtin_catalogs()) {
    for (const auto& s : c.specs) {
      if (s.name == spec_name) info.spec = s;
    }
  }
  info.function = spec_name;
  return std::make_shared<const ProbeInfo>(std::move(info));
}

class PythonCallsTest : public ::testing::Test {
 protected:
  explicit PythonCallsTest(std::string filter = "") : pairing_(std::move(filter)) {}

  void entry(std::uint64_t ts, const char* fn, const char* file, std::int32_t line,
             std::uint32_t tid = 7) {
    feed(entry_probe_, ts, fn, file, line, tid);
  }
  void ret(std::uint64_t ts, const char* fn, const char* file, std::int32_t line,
           std::uint32_t tid = 7) {
    feed(return_probe_, ts, fn, file, line, tid);
  }
  void feed(const std::shared_ptr<const ProbeInfo>& p, std::uint64_t ts, const char* fn,
            const char* file, std::int32_t line, std::uint32_t tid) {
    CallEvent e;
    e.probe = p;
    e.ts_ns = ts;
    e.pid = 5;
    e.tid = tid;
    e.nargs = 3;
    e.str = fn;
    e.str2 = file;
    e.args[2] = static_cast<std::uint32_t>(line);
    ASSERT_TRUE(pairing_.consume(e, [this](const CallEvent& c) {
      calls_.push_back({std::string(c.function()), c.str,
                        static_cast<std::int32_t>(static_cast<std::uint32_t>(c.args[1])),
                        c.has_exit, c.ts_ns, c.dur_ns, c.tid});
      EXPECT_EQ(c.domain(), "python");
      EXPECT_EQ(c.nargs, 2);
    }));
  }

  std::shared_ptr<const ProbeInfo> entry_probe_ = raw_probe(probe::kPythonEntrySpec);
  std::shared_ptr<const ProbeInfo> return_probe_ = raw_probe(probe::kPythonReturnSpec);
  PythonCalls pairing_;
  std::vector<Call> calls_;
};

TEST_F(PythonCallsTest, OtherRecordsPassThrough) {
  CallEvent e;
  ProbeInfo info;
  info.spec.name = "cudaMalloc";
  e.probe = std::make_shared<const ProbeInfo>(info);
  EXPECT_FALSE(pairing_.consume(e, [](const CallEvent&) { FAIL(); }));
  e.probe = nullptr;
  EXPECT_FALSE(pairing_.consume(e, [](const CallEvent&) { FAIL(); }));
}

TEST_F(PythonCallsTest, RecursionPairsInnermostFirst) {
  entry(100, "fib", "/s.py", 1);
  entry(110, "fib", "/s.py", 1);
  entry(120, "fib", "/s.py", 1);
  ret(130, "fib", "/s.py", 3);
  ret(150, "fib", "/s.py", 4);
  ret(200, "fib", "/s.py", 4);
  ASSERT_EQ(calls_.size(), 3u);
  EXPECT_EQ(calls_[0].ts_ns, 120u);
  EXPECT_EQ(calls_[0].dur_ns, 10u);
  EXPECT_EQ(calls_[0].line, 3);
  EXPECT_EQ(calls_[1].dur_ns, 40u);
  EXPECT_EQ(calls_[2].ts_ns, 100u);
  EXPECT_EQ(calls_[2].dur_ns, 100u);
  EXPECT_EQ(calls_[2].file, "/s.py");
  for (const auto& c : calls_) EXPECT_TRUE(c.timed);
  EXPECT_EQ(pairing_.counters().calls, 3u);
  EXPECT_EQ(pairing_.counters().unpaired, 0u);
}

// A raise unwinds frame by frame, each firing function__return.
TEST_F(PythonCallsTest, ExceptionUnwindKeepsPairs) {
  entry(100, "catcher", "/s.py", 9);
  entry(110, "boom", "/s.py", 6);
  ret(115, "boom", "/s.py", 7);  // raised
  entry(120, "boom", "/s.py", 6);
  ret(126, "boom", "/s.py", 7);
  ret(140, "catcher", "/s.py", 14);
  ASSERT_EQ(calls_.size(), 3u);
  EXPECT_EQ(calls_[0].name, "boom");
  EXPECT_EQ(calls_[0].dur_ns, 5u);
  EXPECT_EQ(calls_[1].dur_ns, 6u);
  EXPECT_EQ(calls_[2].name, "catcher");
  EXPECT_EQ(calls_[2].dur_ns, 40u);
}

// A lost return costs that call only; a return without entry is a call without duration.
TEST_F(PythonCallsTest, LostRecordsAndMissingEntries) {
  entry(100, "outer", "/a.py", 1);
  entry(110, "inner", "/a.py", 5);  // its return is lost
  ret(150, "outer", "/a.py", 3);
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].name, "outer");
  EXPECT_EQ(calls_[0].dur_ns, 50u);
  EXPECT_EQ(pairing_.counters().unreturned, 1u);

  ret(300, "main", "/a.py", 20);  // entered before attach
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_FALSE(calls_[1].timed);
  EXPECT_EQ(calls_[1].ts_ns, 300u);
  EXPECT_EQ(calls_[1].line, 20);
  EXPECT_EQ(pairing_.counters().unpaired, 1u);
}

TEST_F(PythonCallsTest, ThreadsPairSeparately) {
  entry(100, "f", "/a.py", 1, 1);
  entry(105, "f", "/a.py", 1, 2);
  ret(110, "f", "/a.py", 2, 2);
  ret(200, "f", "/a.py", 2, 1);
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_EQ(calls_[0].tid, 2u);
  EXPECT_EQ(calls_[0].dur_ns, 5u);
  EXPECT_EQ(calls_[1].tid, 1u);
  EXPECT_EQ(calls_[1].dur_ns, 100u);
}

TEST_F(PythonCallsTest, DepthCapCountsInsteadOfGrowing) {
  const std::size_t n = PythonCalls::kMaxDepth + 3;
  for (std::size_t i = 0; i < n; ++i) entry(100 + i, "deep", "/d.py", 1);
  for (std::size_t i = 0; i < n; ++i) ret(100000 + i, "deep", "/d.py", 2);
  EXPECT_EQ(calls_.size(), n);  // every call is still counted
  EXPECT_EQ(pairing_.counters().depth_overflows, 3u);
  std::size_t untimed = 0;
  for (const auto& c : calls_) untimed += !c.timed;
  EXPECT_EQ(untimed, 3u);
}

TEST_F(PythonCallsTest, SameFunctionIsOneProbe) {
  std::vector<const ProbeInfo*> seen;
  for (int i = 0; i < 3; ++i) {
    CallEvent e;
    e.probe = return_probe_;
    e.str = "g";
    e.str2 = "/pkg/mod.py";
    pairing_.consume(e, [&](const CallEvent& c) {
      seen.push_back(c.probe.get());
      EXPECT_EQ(c.probe->symbol, "mod.g");
      EXPECT_EQ(c.probe->library, "/pkg/mod.py");
    });
  }
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], seen[1]);
  EXPECT_EQ(seen[1], seen[2]);
}

class PythonFilterTest : public PythonCallsTest {
 protected:
  PythonFilterTest() : PythonCallsTest("*/mine/*") {}
};

TEST_F(PythonFilterTest, FilterOnFilePath) {
  entry(100, "keep", "/src/mine/a.py", 1);
  entry(110, "lib", "/usr/lib/python3.11/x.py", 1);
  ret(120, "lib", "/usr/lib/python3.11/x.py", 2);
  ret(130, "keep", "/src/mine/a.py", 2);
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].name, "keep");
  EXPECT_EQ(calls_[0].dur_ns, 30u);
  EXPECT_EQ(pairing_.counters().filtered, 1u);
}

}  // namespace
}  // namespace eacgm::ingest
