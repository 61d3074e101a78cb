// StuckStacks over a synthetic interpreter (fake_interpreter.h): calls past the minimum age
// of sampled processes get their thread's named stack, ending in the call; each call is read
// once and its stack kept while it stays in flight; a new call of the thread is read again;
// young calls and other processes' are left alone; the per-scan cap leaves the rest for the
// next scan, oldest first; an unreadable process is counted and the scan goes on.
#include "ingest/stuck_stacks.h"

#include <gtest/gtest.h>

#include <map>

#include "fake_interpreter.h"

namespace eacgm::ingest {
namespace {

using fakes::Interpreter;
using fakes::kCodeType;
using fakes::kPid;

constexpr std::uint64_t kSecond = 1'000'000'000;

class StuckStacksTest : public ::testing::Test {
 protected:
  StuckStacksTest() : py(12) {
    code = py.code(5);
    py.frame(0x40000, code, 0, 0);
    for (std::uint32_t t = 0; t < 20; ++t) py.thread(kPid + t, 0x40000);
    probe->id = 3;
    probe->function = "block_wait";
    probe->spec.domain = "user";
  }
  StuckStacks make(StuckStackOptions options = {}) {
    return StuckStacks(
        decoder,
        [](std::uint32_t pid) { return pid == kPid ? std::optional(Interpreter(12).proc) : std::nullopt; },
        options,
        [this](std::uint32_t pid) -> RemoteRead {
          if (pid != kPid) return [](std::uint64_t, void*, std::size_t) { return false; };
          return py.mem.reader();
        });
  }
  InflightCall call(std::uint32_t pid, std::uint32_t tid, std::uint64_t entry) {
    InflightCall c;
    c.call.pid = pid;
    c.call.tid = tid;
    c.call.probe = probe;
    c.entry_mono_ns = entry;
    return c;
  }

  Interpreter py;
  std::uint64_t code = 0;
  std::shared_ptr<ProbeInfo> probe = std::make_shared<ProbeInfo>();
  PythonStackDecoder decoder{
      [](std::uint32_t, int, std::uint64_t) -> std::optional<PythonCodeInfo> {
        PythonCodeInfo i;
        i.code = std::make_shared<const PythonCode>(PythonCode{"wait_here", "/app/w.py", 4});
        i.code_id = Interpreter::code_id(5, Interpreter(12).l.code_id_words);
        i.type = kCodeType;
        return i;
      },
      [this](std::uint32_t id) {
        return id == probe->id ? std::shared_ptr<const ProbeInfo>(probe) : nullptr;
      },
      [](std::uint32_t) { return kCodeType; }};
};

TEST_F(StuckStacksTest, ReadsEachOldCallOnceAndKeepsItsStackWhileItStaysInFlight) {
  StuckStacks stuck = make();
  const std::uint64_t scan = 100 * kSecond;
  std::vector<InflightCall> calls = {call(kPid, kPid + 1, scan - 6 * kSecond),  // old enough
                                     call(kPid, kPid + 2, scan - 1 * kSecond),  // too young
                                     call(kPid + 1, 9, scan - 60 * kSecond)};   // not a Python process
  stuck.attach(calls, scan);
  ASSERT_NE(calls[0].python_stack, nullptr);
  ASSERT_EQ(calls[0].python_stack->frames.size(), 2u);
  EXPECT_EQ(calls[0].python_stack->frames[0].code->function, "[user] block_wait");
  EXPECT_EQ(calls[0].python_stack->frames[1].code->function, "wait_here");
  EXPECT_EQ(calls[0].python_stack->tid, kPid + 1);
  EXPECT_EQ(calls[1].python_stack, nullptr);
  EXPECT_EQ(calls[2].python_stack, nullptr);
  EXPECT_EQ(stuck.counters().read, 1u);

  // The next scan: the same calls, one now old enough. The first is not read again.
  const int reads = py.mem.reads;
  const auto first = calls[0].python_stack;
  std::vector<InflightCall> again = {call(kPid, kPid + 1, scan - 6 * kSecond),
                                     call(kPid, kPid + 2, scan - kSecond)};
  stuck.attach(again, scan + 5 * kSecond);
  EXPECT_EQ(again[0].python_stack, first) << "kept, not read again";
  ASSERT_NE(again[1].python_stack, nullptr);
  EXPECT_EQ(stuck.counters().read, 2u);
  EXPECT_GT(py.mem.reads, reads);

  // The first call returned and its thread made another: a new entry time, read again.
  const int before = py.mem.reads;
  std::vector<InflightCall> next = {call(kPid, kPid + 1, scan + 1 * kSecond)};
  stuck.attach(next, scan + 10 * kSecond);
  ASSERT_NE(next[0].python_stack, nullptr);
  EXPECT_NE(next[0].python_stack, first);
  EXPECT_EQ(stuck.counters().read, 3u);
  EXPECT_GT(py.mem.reads, before);
  EXPECT_EQ(decoder.counters().samples, 0u);
  EXPECT_EQ(decoder.counters().thread_reads, 3u);
}

TEST_F(StuckStacksTest, ReadsAFewPerScanOldestFirstAndTheRestAtTheNextScans) {
  StuckStackOptions o;
  o.max_reads_per_scan = 4;
  o.max_read_time = std::chrono::hours(1);  // only the count caps here
  StuckStacks stuck = make(o);
  const std::uint64_t scan = 1000 * kSecond;
  std::vector<InflightCall> calls;
  for (std::uint32_t t = 0; t < 10; ++t) calls.push_back(call(kPid, kPid + t, scan - (10 + t) * kSecond));
  stuck.attach(calls, scan);
  for (std::uint32_t t = 0; t < 10; ++t) {
    EXPECT_EQ(calls[t].python_stack != nullptr, t >= 6) << "the four oldest first; thread " << t;
  }
  EXPECT_EQ(stuck.counters().read, 4u);
  EXPECT_EQ(stuck.counters().deferred, 6u);
  for (auto& c : calls) c.python_stack = nullptr;
  stuck.attach(calls, scan + kSecond);
  for (std::uint32_t t = 0; t < 10; ++t) EXPECT_EQ(calls[t].python_stack != nullptr, t >= 2) << t;
  stuck.attach(calls, scan + 2 * kSecond);
  for (std::uint32_t t = 0; t < 10; ++t) EXPECT_NE(calls[t].python_stack, nullptr) << t;
  EXPECT_EQ(stuck.counters().read, 10u);
}

TEST_F(StuckStacksTest, AThreadNotFoundOrAProcessNotReadableIsCountedAndTheScanGoesOn) {
  StuckStacks stuck = make();
  const std::uint64_t scan = 100 * kSecond;
  std::vector<InflightCall> calls = {call(kPid, 99999, scan - 9 * kSecond),  // no thread state
                                     call(kPid, kPid + 3, scan - 7 * kSecond)};
  py.mem.unmap(0x40000);  // the frame: the walk faults at once, still a (short) stack
  stuck.attach(calls, scan);
  EXPECT_EQ(calls[0].python_stack, nullptr);
  EXPECT_EQ(stuck.counters().unknown, 1u);
  EXPECT_EQ(calls[1].python_stack, nullptr) << "no Python frame: nothing to show";
  EXPECT_EQ(stuck.counters().read, 1u);

  py.mem.unmap(fakes::kRuntime);
  std::vector<InflightCall> more = {call(kPid, kPid + 4, scan - 8 * kSecond),
                                    call(kPid, kPid + 5, scan - 6 * kSecond)};
  stuck.attach(more, scan);
  EXPECT_EQ(more[0].python_stack, nullptr);
  EXPECT_EQ(more[1].python_stack, nullptr);
  EXPECT_EQ(stuck.counters().unreadable, 2u);
}

}  // namespace
}  // namespace eacgm::ingest
