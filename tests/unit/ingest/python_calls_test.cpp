// Python entry/return pairing: recursion, exceptions (returns without their entries'
// order disturbed), lost records, threads, the depth cap and the file filter; through
// USDT records (paired by name) and frame-reading records (paired by stack pointer).
#include "ingest/python_calls.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "probe/catalog.h"
#include "probe/python_layouts.h"

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
  std::uint8_t faults = 0;
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

  void entry(std::uint64_t ts, const char* fn, const char* file, std::int32_t line, std::uint32_t tid = 7) {
    feed(entry_probe_, ts, fn, file, line, tid);
  }
  void ret(std::uint64_t ts, const char* fn, const char* file, std::int32_t line, std::uint32_t tid = 7) {
    feed(return_probe_, ts, fn, file, line, tid);
  }
  void feed(const std::shared_ptr<const ProbeInfo>& p, std::uint64_t ts, const char* fn, const char* file,
            std::int32_t line, std::uint32_t tid) {
    CallEvent e;
    e.probe = p;
    e.ts_ns = ts;
    e.pid = 5;
    e.tid = tid;
    e.nargs = 3;
    e.str = fn;
    e.str2 = file;
    e.args[2] = static_cast<std::uint32_t>(line);
    ASSERT_TRUE(pairing_.consume(e, [this](const CallEvent& c) { record(c); }));
  }
  void record(const CallEvent& c) {
    calls_.push_back({std::string(c.function()), c.str,
                      static_cast<std::int32_t>(static_cast<std::uint32_t>(c.args[1])), c.has_exit, c.ts_ns,
                      c.dur_ns, c.tid, c.fault_mask});
    EXPECT_EQ(c.domain(), "python");
    EXPECT_EQ(c.nargs, 2);
  }

  // Frame reading: an entry names the function; its return only gives the stack pointer.
  void fentry(std::uint64_t ts, std::uint64_t sp, const char* fn, const char* file, std::int32_t line,
              std::uint32_t tid = 7, std::uint8_t faults = 0) {
    CallEvent e;
    e.probe = frame_probe_;
    e.ts_ns = ts;
    e.pid = 5;
    e.tid = tid;
    e.nargs = probe::kFrameArgCount;
    e.args[probe::kFrameSp] = sp;
    e.args[probe::kFrameCode] = 0x7f0000001000;
    e.str = fn;
    e.str2 = file;
    e.args[probe::kFrameLine] = static_cast<std::uint32_t>(line);
    e.fault_mask = faults;
    ASSERT_TRUE(pairing_.consume(e, [this](const CallEvent& c) { record(c); }));
  }
  // `entry_sp` is the entry's stack pointer; the return record carries it plus 8.
  void fret(std::uint64_t ts, std::uint64_t entry_sp, std::uint32_t tid = 7) {
    CallEvent e;
    e.probe = frame_probe_;
    e.has_exit = true;
    e.ts_ns = ts;
    e.pid = 5;
    e.tid = tid;
    e.nargs = 1;
    e.args[probe::kFrameSp] = entry_sp + 8;
    ASSERT_TRUE(pairing_.consume(e, [this](const CallEvent& c) { record(c); }));
  }

  std::shared_ptr<const ProbeInfo> entry_probe_ = raw_probe(probe::kPythonEntrySpec);
  std::shared_ptr<const ProbeInfo> return_probe_ = raw_probe(probe::kPythonReturnSpec);
  std::shared_ptr<const ProbeInfo> frame_probe_ = raw_probe(probe::kPythonFrameSpec);
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

TEST_F(PythonCallsTest, FrameRecursionPairsByStackPointer) {
  fentry(100, 0x7ffd1000, "<module>", "/s.py", 1);
  fentry(110, 0x7ffd0f00, "fib", "/s.py", 3);
  fentry(120, 0x7ffd0e00, "fib", "/s.py", 3);
  fret(130, 0x7ffd0e00);
  fentry(140, 0x7ffd0e00, "fib", "/s.py", 3);  // the same depth again: the same sp
  fret(145, 0x7ffd0e00);
  fret(150, 0x7ffd0f00);
  fret(200, 0x7ffd1000);
  ASSERT_EQ(calls_.size(), 4u);
  EXPECT_EQ(calls_[0].name, "fib");
  EXPECT_EQ(calls_[0].ts_ns, 120u);
  EXPECT_EQ(calls_[0].dur_ns, 10u);
  EXPECT_EQ(calls_[0].line, 3);  // the first line of the code, known at entry
  EXPECT_EQ(calls_[0].file, "/s.py");
  EXPECT_EQ(calls_[1].dur_ns, 5u);
  EXPECT_EQ(calls_[2].ts_ns, 110u);
  EXPECT_EQ(calls_[2].dur_ns, 40u);
  EXPECT_EQ(calls_[3].name, "<module>");
  EXPECT_EQ(calls_[3].dur_ns, 100u);
  for (const auto& c : calls_) {
    EXPECT_TRUE(c.timed);
    EXPECT_EQ(c.faults, 0);
  }
  EXPECT_EQ(pairing_.counters().calls, 4u);
  EXPECT_EQ(pairing_.counters().unpaired, 0u);
}

// Returns the kernel never reported (deeper than its return-probe nesting limit) or lost
// records: the entries above the matching one are dropped and counted, not mispaired.
TEST_F(PythonCallsTest, FrameLostReturnsCostOnlyThoseCalls) {
  fentry(100, 0x9000, "outer", "/a.py", 1);
  fentry(110, 0x8f00, "mid", "/a.py", 5);
  fentry(120, 0x8e00, "inner", "/a.py", 9);
  fret(150, 0x9000);  // outer's return: mid and inner never returned
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].name, "outer");
  EXPECT_EQ(calls_[0].dur_ns, 50u);
  EXPECT_EQ(pairing_.counters().unreturned, 2u);
  // A return whose entry was never seen (entered before tracing) cannot be named.
  fret(300, 0xa000);
  EXPECT_EQ(calls_.size(), 1u);
  EXPECT_EQ(pairing_.counters().orphan_returns, 1u);
  EXPECT_EQ(pairing_.counters().unpaired, 0u);
}

TEST_F(PythonCallsTest, FrameThreadsPairSeparately) {
  fentry(100, 0x5000, "f", "/a.py", 1, 1);
  fentry(105, 0x5000, "g", "/a.py", 4, 2);  // the same sp on another thread's stack
  fret(110, 0x5000, 2);
  fret(200, 0x5000, 1);
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_EQ(calls_[0].name, "g");
  EXPECT_EQ(calls_[0].tid, 2u);
  EXPECT_EQ(calls_[0].dur_ns, 5u);
  EXPECT_EQ(calls_[1].name, "f");
  EXPECT_EQ(calls_[1].dur_ns, 100u);
}

// What frame reading could not read, or read from a str that is not compact ASCII, is
// not shown as if it were a name: "?" for the function, a null file or line.
TEST_F(PythonCallsTest, FrameUnreadableOrNonAsciiNames) {
  fentry(100, 0x100, "", "", 0, 7, (1u << probe::kFrameFunction) | (1u << probe::kFrameFile));
  fret(110, 0x100);
  fentry(120, 0x100, "\x0c", "\x11\x01", 7);  // a non-ASCII str read at the ASCII offset
  fret(130, 0x100);
  fentry(140, 0x100, "ok", "/a.py", 0, 7, 1u << probe::kFrameLine);
  fret(150, 0x100);
  ASSERT_EQ(calls_.size(), 3u);
  EXPECT_EQ(calls_[0].name, "?");
  EXPECT_EQ(calls_[0].file, "");
  EXPECT_EQ(calls_[0].faults, 1);  // the file (reported args: file, line)
  EXPECT_EQ(calls_[1].name, "?");
  EXPECT_EQ(calls_[1].faults, 1);
  EXPECT_EQ(calls_[2].name, "ok");
  EXPECT_EQ(calls_[2].file, "/a.py");
  EXPECT_EQ(calls_[2].faults, 2);  // the line
}

TEST_F(PythonCallsTest, FrameDepthCapCountsInsteadOfGrowing) {
  const std::size_t n = PythonCalls::kMaxDepth + 3;
  for (std::size_t i = 0; i < n; ++i) fentry(100 + i, 0x100000 - 0x100 * i, "deep", "/d.py", 1);
  for (std::size_t i = n; i-- > 0;) fret(100000 + i, 0x100000 - 0x100 * i);
  EXPECT_EQ(calls_.size(), PythonCalls::kMaxDepth);  // past the cap: unnamed, not reported
  EXPECT_EQ(pairing_.counters().depth_overflows, 3u);
  EXPECT_EQ(pairing_.counters().orphan_returns, 0u);
  EXPECT_EQ(pairing_.counters().unreturned, 0u);
}

// Past the cap and past the kernel's return-probe depth: those returns never come, and
// the calls still on the stack must pair as before.
TEST_F(PythonCallsTest, FrameDepthCapWithoutItsReturns) {
  const std::size_t n = PythonCalls::kMaxDepth + 3;
  for (std::size_t i = 0; i < n; ++i) fentry(100 + i, 0x100000 - 0x100 * i, "deep", "/d.py", 1);
  fret(200000, 0x100000 - 0x100 * 10);  // the 11th call returns; everything above never did
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].ts_ns, 110u);
  EXPECT_EQ(pairing_.counters().unreturned, PythonCalls::kMaxDepth - 11 + 3);
  fret(200010, 0x100000);
  ASSERT_EQ(calls_.size(), 2u);
  EXPECT_EQ(calls_[1].ts_ns, 100u);
  EXPECT_EQ(pairing_.counters().orphan_returns, 0u);
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

TEST_F(PythonFilterTest, FrameReadingFilterOnFilePath) {
  fentry(100, 0x200, "keep", "/src/mine/a.py", 1);
  fentry(110, 0x100, "lib", "/usr/lib/python3.12/x.py", 1);
  fret(120, 0x100);
  fret(130, 0x200);
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_EQ(calls_[0].name, "keep");
  EXPECT_EQ(calls_[0].dur_ns, 30u);
  EXPECT_EQ(pairing_.counters().filtered, 1u);
}

}  // namespace
}  // namespace eacgm::ingest
