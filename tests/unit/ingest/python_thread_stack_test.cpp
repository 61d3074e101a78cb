// The user-space walk of a thread's Python frames against a synthetic interpreter laid out
// by the real CPython 3.12 and 3.10 offsets in a fake memory: the thread found by its
// native id, C entry frames and non-code frames left out, the record decoded by the
// sampler's decoder, a thread not found, a read fault mid-walk, a frame read field by
// field, the depth cap, and 3.10's single-thread rule.
#include "ingest/python_thread_stack.h"

#include <gtest/gtest.h>

#include <map>

#include "fake_interpreter.h"
#include "ingest/python_stacks.h"

namespace eacgm::ingest {
namespace {

using fakes::Interpreter;
using fakes::kCodeType;
using fakes::kPid;
using fakes::kRuntime;

TEST(PythonThreadStack, FindsTheThreadByItsNativeIdAndWalksItsFramesAsTheSamplerDoes) {
  Interpreter py(12);
  const std::uint64_t inner = py.code(100), outer = py.code(200), module = py.code(300);
  const std::uint64_t not_code = py.code(400, 0x1234);  // its type is not PyCode_Type
  // inner <- outer <- a C entry frame <- a frame of something else <- module.
  py.frame(0x40000, inner, 0x50200, 0x41000);
  py.frame(0x41000, outer, 0x51300, 0x42000);
  py.frame(0x42000, inner, 0, 0x43000, EACGM_PY_OWNED_BY_CSTACK);
  py.frame(0x43000, not_code, 0, 0x44000);
  py.frame(0x44000, module, 0x52040, 0);
  py.thread(100, 0x60000);  // another thread, first in the list
  py.frame(0x60000, module, 0x52000, 0);
  py.thread(4242, 0x40000);

  eacgm_py_sample s{};
  ASSERT_EQ(py.read(4242, s), ThreadStackStatus::kRead);
  EXPECT_EQ(s.pid, kPid);
  EXPECT_EQ(s.tid, 4242u);
  EXPECT_EQ(s.version, 0x030c);
  EXPECT_EQ(s.flags, 0);
  ASSERT_EQ(s.depth, 3);
  EXPECT_EQ(s.frames[0].code, inner);
  EXPECT_EQ(s.frames[0].instr, 0x50200u);
  EXPECT_EQ(s.frames[0].code_id, Interpreter::code_id(100, py.l.code_id_words));
  EXPECT_EQ(s.frames[1].code, outer);
  EXPECT_EQ(s.frames[1].instr, 0x51300u);
  EXPECT_EQ(s.frames[2].code, module);
  EXPECT_EQ(s.frames[2].code_id, Interpreter::code_id(300, py.l.code_id_words));

  // The sampler's decoder names the record, ending in the call the thread waits in.
  auto code_info = [&](const char* name, std::uint32_t seed, std::uint64_t addr) {
    PythonCodeInfo i;
    i.code = std::make_shared<const PythonCode>(PythonCode{name, "/app/train.py", 10});
    i.code_id = Interpreter::code_id(seed, py.l.code_id_words);
    i.first_unit = addr + 0xc0;
    i.type = kCodeType;
    return i;
  };
  std::map<std::uint64_t, PythonCodeInfo> codes{{inner, code_info("all_reduce", 100, inner)},
                                                {outer, code_info("step", 200, outer)},
                                                {module, code_info("<module>", 300, module)}};
  auto probe = std::make_shared<ProbeInfo>();
  probe->id = 9;
  probe->function = "ncclAllReduce";
  probe->spec.domain = "nccl";
  PythonStackDecoder decoder(
      [&](std::uint32_t, int, std::uint64_t addr) -> std::optional<PythonCodeInfo> { return codes.at(addr); },
      [&](std::uint32_t id) { return id == 9 ? probe : nullptr; }, [](std::uint32_t) { return kCodeType; });
  s.flags |= EACGM_PY_IN_CALL;
  s.call_probe = 9;
  PythonStack stack;
  ASSERT_TRUE(decoder.decode(&s, EACGM_PY_SAMPLE_SIZE(s.depth), stack, true));
  ASSERT_EQ(stack.frames.size(), 4u);
  EXPECT_EQ(stack.frames[0].code->function, "[nccl] ncclAllReduce");
  EXPECT_EQ(stack.frames[1].code->function, "all_reduce");
  EXPECT_EQ(stack.frames[2].code->function, "step");
  EXPECT_EQ(stack.frames[3].code->function, "<module>");
  EXPECT_EQ(decoder.counters().thread_reads, 1u);
  EXPECT_EQ(decoder.counters().samples, 0u) << "a read is not a sample";
}

TEST(PythonThreadStack, AThreadWithoutAThreadStateIsNotFound) {
  Interpreter py(12);
  py.frame(0x40000, py.code(1), 0, 0);
  py.thread(100, 0x40000);
  py.thread(101, 0x40000);
  eacgm_py_sample s{};
  EXPECT_EQ(py.read(102, s), ThreadStackStatus::kNoThread);
  EXPECT_EQ(s.depth, 0);
}

TEST(PythonThreadStack, AProcessWhoseRuntimeCannotBeReadIsUnreadable) {
  Interpreter py(12);
  py.mem.unmap(kRuntime);
  eacgm_py_sample s{};
  EXPECT_EQ(py.read(100, s), ThreadStackStatus::kUnreadable);
}

TEST(PythonThreadStack, AReadFaultMidWalkEndsTheStackWithTheFlag) {
  Interpreter py(13);
  const std::uint64_t c = py.code(7);
  py.frame(0x40000, c, 0x50100, 0x41000);
  py.frame(0x41000, c, 0x50100, 0x42000);  // its caller is not mapped
  py.thread(77, 0x40000);
  eacgm_py_sample s{};
  ASSERT_EQ(py.read(77, s), ThreadStackStatus::kRead);
  EXPECT_EQ(s.depth, 2);
  EXPECT_EQ(s.flags, EACGM_PY_READ_FAULT);
}

TEST(PythonThreadStack, AFrameWhoseLastFieldsAreNotMappedIsReadFieldByField) {
  // The frame's fields are read in one read; where that fails (here f_lasti lies past the
  // frame's mapping), each field alone, as the sampler reads them.
  Interpreter py(10);
  const std::uint64_t c = py.code(3);
  py.mem.put<std::uint64_t>(0x40000, py.l.frame_code, c);
  py.mem.put<std::uint64_t>(0x40000, py.l.frame_previous, 0x41000);
  ASSERT_GT(py.l.frame_instr, py.l.frame_code);
  ASSERT_GT(py.l.frame_instr, py.l.frame_previous);
  py.frame(0x41000, c, 8, 0);
  py.thread(0, 0x40000);
  eacgm_py_sample s{};
  ASSERT_EQ(py.read(kPid, s), ThreadStackStatus::kRead);
  ASSERT_EQ(s.depth, 2);
  EXPECT_EQ(s.frames[0].code, c);
  EXPECT_EQ(s.frames[0].instr, 0u) << "unreadable: unknown";
  EXPECT_EQ(s.frames[1].instr, 8u);
  EXPECT_EQ(s.flags, 0);
}

TEST(PythonThreadStack, AStackDeeperThanTheCapIsTruncated) {
  Interpreter py(11);
  const std::uint64_t c = py.code(7);
  for (int i = 0; i < 80; ++i)
    py.frame(0x100000 + 0x1000 * i, c, 0x50100, i == 79 ? 0 : 0x100000 + 0x1000 * (i + 1));
  py.thread(77, 0x100000);
  eacgm_py_sample s{};
  ASSERT_EQ(py.read(77, s), ThreadStackStatus::kRead);
  EXPECT_EQ(s.depth, EACGM_PY_MAX_DEPTH);
  EXPECT_EQ(s.flags, EACGM_PY_TRUNCATED);

  // Skipped frames count against the walk's steps too (twice the depth, as the sampler).
  Interpreter entries(12);
  const std::uint64_t e = entries.code(7);
  for (int i = 0; i < 2 * EACGM_PY_MAX_DEPTH + 1; ++i) {
    entries.frame(0x100000 + 0x1000 * i, e, 0, 0x100000 + 0x1000 * (i + 1), EACGM_PY_OWNED_BY_CSTACK);
  }
  entries.thread(77, 0x100000);
  ASSERT_EQ(entries.read(77, s), ThreadStackStatus::kRead);
  EXPECT_EQ(s.depth, 0);
  EXPECT_EQ(s.flags, EACGM_PY_TRUNCATED);
}

TEST(PythonThreadStack, ThreePointTenReadsOnlyTheMainThreadOfAProcessWithOneThreadState) {
  Interpreter one(10);
  const std::uint64_t c = one.code(3);
  one.frame(0x40000, c, 12, 0x41000);  // f_lasti: an index
  one.frame(0x41000, c, 4, 0);
  one.thread(0, 0x40000);
  eacgm_py_sample s{};
  ASSERT_EQ(one.read(kPid, s), ThreadStackStatus::kRead);
  EXPECT_EQ(s.version, 0x030a);
  ASSERT_EQ(s.depth, 2);
  EXPECT_EQ(s.frames[0].instr, 12u);
  EXPECT_EQ(s.frames[1].instr, 4u);
  // Another thread of that process (a C thread, or one whose state is not told apart).
  EXPECT_EQ(one.read(kPid + 1, s), ThreadStackStatus::kAmbiguous);

  // Two thread states: which one is the thread's cannot be told.
  Interpreter two(10);
  two.frame(0x40000, two.code(3), 12, 0);
  two.thread(0, 0x40000);
  two.thread(0, 0x40000);
  EXPECT_EQ(two.read(kPid, s), ThreadStackStatus::kAmbiguous);

  // No thread state at all.
  Interpreter none(9);
  EXPECT_EQ(none.read(kPid, s), ThreadStackStatus::kNoThread);
}

}  // namespace
}  // namespace eacgm::ingest
