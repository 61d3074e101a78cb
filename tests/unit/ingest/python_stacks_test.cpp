// The sample decoder: records to named stacks through a fake code reader, lines from
// each frame's instruction, one read per code object and process while the frames'
// instructions lie in it (again when one does not: another code object at the same
// address), the code type checked at each read, malformed records.
#include "ingest/python_stacks.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <map>

#include "bpf/py_sample.h"

namespace eacgm::ingest {
namespace {

constexpr std::uint64_t kHot = 0x1000, kMain = 0x2000, kUnits = 0x10c0;  // kHot + co_code_adaptive (3.12)

struct FakeCodes {
  std::map<std::uint64_t, PythonCodeInfo> codes;
  int reads = 0;
  PythonCodeReader reader() {
    return [this](std::uint32_t, int, std::uint64_t addr) -> std::optional<PythonCodeInfo> {
      ++reads;
      auto it = codes.find(addr);
      if (it == codes.end()) return std::nullopt;
      return it->second;
    };
  }
};

PythonCodeInfo info(const char* function, int first_line, std::uint64_t first_unit,
                    std::vector<std::uint8_t> table = {}) {
  PythonCodeInfo i;
  i.code = std::make_shared<const PythonCode>(PythonCode{function, "/app/x.py", first_line});
  i.first_unit = first_unit;
  i.linetable = std::move(table);
  return i;
}

// A sampled frame: its code object, instruction and the code's identity when sampled.
struct Frame {
  std::uint64_t code;
  std::uint64_t instr;
  std::uint32_t code_id = 0;  // as the fake codes' (PythonCodeInfo's default)
};

eacgm_py_sample sample(std::uint16_t version, std::vector<Frame> frames) {
  eacgm_py_sample s{};
  s.ts_ns = 5;
  s.pid = 7;
  s.tid = 8;
  s.version = version;
  s.depth = static_cast<std::uint16_t>(frames.size());
  std::strcpy(s.comm, "python3.12");
  for (std::size_t i = 0; i < frames.size(); ++i) {
    s.frames[i].code = frames[i].code;
    s.frames[i].instr = frames[i].instr;
    s.frames[i].code_id = frames[i].code_id;
  }
  return s;
}

TEST(PythonStacks, NamesFramesAndLines) {
  FakeCodes fake;
  // hot: first line 3; units 0-1 on line 4, units 2-3 on line 5 (one-line forms).
  fake.codes[kHot] = info("hot", 3, kUnits, {0x80 | (11 << 3) | 1, 0, 0, 0x80 | (11 << 3) | 1, 0, 0});
  fake.codes[kMain] = info("main", 10, kMain + 0xc0);
  PythonStackDecoder d(fake.reader());
  auto s = sample(0x030c, {{kHot, kUnits + 6}, {kMain, 0}});  // unit 3
  PythonStack out;
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(2), out));
  EXPECT_EQ(out.pid, 7u);
  EXPECT_EQ(out.tid, 8u);
  EXPECT_EQ(out.comm, "python3.12");
  ASSERT_EQ(out.frames.size(), 2u);
  EXPECT_EQ(out.frames[0].code->function, "hot");
  EXPECT_EQ(out.frames[0].line, 5);
  EXPECT_EQ(out.frames[1].code->function, "main");
  EXPECT_EQ(out.frames[1].line, 10);  // no table: the first line
  // Read once per process and code object.
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(2), out));
  EXPECT_EQ(fake.reads, 2);
  EXPECT_EQ(d.counters().samples, 2u);
  EXPECT_EQ(d.counters().codes, 2u);
  d.forget(7);
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(2), out));
  EXPECT_EQ(fake.reads, 4);
}

TEST(PythonStacks, Python310LinesFromTheInstructionIndex) {
  FakeCodes fake;
  fake.codes[kHot] = info("hot", 3, 0, {4, 1, 6, 2});  // bytes 0-3 line 4, 4-9 line 6
  PythonStackDecoder d(fake.reader());
  auto s = sample(0x030a, {{kHot, 3}});  // f_lasti 3: byte 6
  PythonStack out;
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].line, 6);
}

TEST(PythonStacks, Python39LinesFromTheByteOffset) {
  FakeCodes fake;
  fake.codes[kHot] = info("hot", 3, 0, {4, 1, 6, 2});  // co_lnotab: bytes 0-3 line 3, 4-9 line 4, 10- line 6
  PythonStackDecoder d(fake.reader());
  PythonStack out;
  for (const auto& [lasti, line] : {std::pair{0, 3}, {2, 3}, {6, 4}, {10, 6}}) {
    auto s = sample(0x0309, {{kHot, static_cast<std::uint64_t>(lasti)}});  // f_lasti in bytes
    ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
    EXPECT_EQ(out.frames[0].line, line) << lasti;
  }
}

TEST(PythonStacks, UnreadableCodeIsNamedByItsAddress) {
  FakeCodes fake;
  PythonStackDecoder d(fake.reader());
  auto s = sample(0x030c, {{0xabc0, 0}});
  PythonStack out;
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "<code 0xabc0>");
  EXPECT_EQ(d.counters().unnamed, 1u);
}

// The address of kHot's code unit `i`.
constexpr std::uint64_t unit(std::uint64_t i) { return kUnits + 2 * i; }

// A code object of `units` code units at kHot (3.12: its first unit at kUnits).
PythonCodeInfo sized(const char* function, std::uint64_t units, std::uint64_t type = 0) {
  PythonCodeInfo i = info(function, 3, kUnits);
  i.code_bytes = units * 2;
  i.type = type;
  return i;
}

// The code object at an address is freed and a larger one allocated there: a sample past
// the end of the one read before is of the new one, which is read and named anew.
TEST(PythonStacks, ReplacedCodeIsReadAgain) {
  FakeCodes fake;
  fake.codes[kHot] = sized("gen_1", 10);
  PythonStackDecoder d(fake.reader());
  PythonStack out;
  auto first = sample(0x030c, {{kHot, unit(9)}});  // its last unit
  ASSERT_TRUE(d.decode(&first, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "gen_1");
  fake.codes[kHot] = sized("gen_2", 30);
  auto later = sample(0x030c, {{kHot, unit(25)}});
  ASSERT_TRUE(d.decode(&later, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "gen_2");
  EXPECT_EQ(fake.reads, 2);
  EXPECT_EQ(d.counters().reread, 1u);
  EXPECT_EQ(d.counters().codes, 2u);
  // Kept from then on: samples anywhere in it read nothing.
  auto early = sample(0x030c, {{kHot, kUnits + 2}});
  ASSERT_TRUE(d.decode(&early, EACGM_PY_SAMPLE_SIZE(1), out));
  ASSERT_TRUE(d.decode(&later, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "gen_2");
  EXPECT_EQ(fake.reads, 2);
  EXPECT_EQ(d.counters().reread, 1u);
  EXPECT_EQ(d.counters().unnamed, 0u);
}

// A kept code object is not read again for samples anywhere in it: from the unit before
// its first (a frame not started yet) to its end; an unknown instruction proves nothing.
TEST(PythonStacks, ValidCodeIsNotReadAgain) {
  FakeCodes fake;
  fake.codes[kHot] = sized("hot", 10);
  PythonStackDecoder d(fake.reader());
  PythonStack out;
  for (std::uint64_t instr : {kUnits, kUnits - 2, unit(9), unit(10), std::uint64_t{0}}) {
    auto s = sample(0x030c, {{kHot, instr}});
    ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
    EXPECT_EQ(out.frames[0].code->function, "hot") << instr;
  }
  EXPECT_EQ(fake.reads, 1);
  EXPECT_EQ(d.counters().reread, 0u);
  // One unit further on either side is another code object's.
  for (std::uint64_t instr : {kUnits - 4, unit(11)}) {
    auto s = sample(0x030c, {{kHot, instr}});
    ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
  }
  EXPECT_EQ(d.counters().reread, 2u);
}

// Up to 3.10 the instruction is f_lasti: in code units (3.10) or bytes (3.8, 3.9),
// checked against co_code's length.
TEST(PythonStacks, ReplacedCodeIsReadAgainBefore311) {
  for (std::uint16_t version : {0x0309, 0x030a}) {
    FakeCodes fake;
    fake.codes[kHot] = info("gen_1", 3, 0);
    fake.codes[kHot].code_bytes = 8;
    PythonStackDecoder d(fake.reader());
    PythonStack out;
    const std::uint64_t last = version == 0x030a ? 3 : 7;  // the last unit, the last byte
    auto s = sample(version, {{kHot, last}});
    ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
    EXPECT_EQ(out.frames[0].code->function, "gen_1");
    fake.codes[kHot] = info("gen_2", 3, 0);
    fake.codes[kHot].code_bytes = 40;
    ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
    EXPECT_EQ(fake.reads, 1) << version;
    auto past = sample(version, {{kHot, last + 1}});
    ASSERT_TRUE(d.decode(&past, EACGM_PY_SAMPLE_SIZE(1), out));
    EXPECT_EQ(out.frames[0].code->function, "gen_2") << version;
    EXPECT_EQ(d.counters().reread, 1u) << version;
  }
}

// A code object freed and another allocated at its address, sampled where both have
// bytecode (3.8: a `<string>` module body run at start-up, then `hot`): the frame's code
// identity, not its instruction, shows the change. A sample of the first one still in
// flight once the second is read is not named after the second.
TEST(PythonStacks, ReplacedCodeOfAnotherIdentityIsReadAgain) {
  FakeCodes fake;
  fake.codes[kHot] = info("<module>", 1, 0);
  fake.codes[kHot].code_bytes = 60;
  fake.codes[kHot].code_id = 11;
  PythonStackDecoder d(fake.reader());
  PythonStack out;
  auto module = sample(0x0308, {{kHot, 10, 11}});
  ASSERT_TRUE(d.decode(&module, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "<module>");
  fake.codes[kHot] = info("hot", 3, 0);
  fake.codes[kHot].code_bytes = 40;
  fake.codes[kHot].code_id = 22;
  auto hot = sample(0x0308, {{kHot, 10, 22}});
  ASSERT_TRUE(d.decode(&hot, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "hot");
  EXPECT_EQ(d.counters().reread, 1u);
  ASSERT_TRUE(d.decode(&hot, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(fake.reads, 2);  // kept
  ASSERT_TRUE(d.decode(&module, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "<code 0x1000>");
  EXPECT_EQ(d.counters().unnamed, 1u);
  ASSERT_TRUE(d.decode(&hot, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "hot");
}

// The identity folds only the words its mask names: the others (a warm-up counter the
// interpreter changes as the code runs) leave it alone.
TEST(PythonStacks, CodeIdentityFoldsTheMaskedWords) {
  std::array<std::uint32_t, EACGM_PY_CODE_ID_WORDS> words{};
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::uint32_t>(i * 7 + 1);
  const std::uint16_t mask = 0x7dff;  // 3.11: word 9 is co_warmup
  const auto id = eacgm_py_code_id(words.data(), mask);
  words[9] += 5;
  words[15] += 5;
  EXPECT_EQ(eacgm_py_code_id(words.data(), mask), id);
  words[14] += 1;  // co_firstlineno
  EXPECT_NE(eacgm_py_code_id(words.data(), mask), id);
}

// What lives at the address is not a code object (any more: the sampler saw one): the
// frame is named by its address, nothing is kept, and the next sample reads again.
TEST(PythonStacks, WrongTypeIsUnnamed) {
  constexpr std::uint64_t kCodeType = 0x7f0000c0de00;
  FakeCodes fake;
  fake.codes[kHot] = sized("hot", 10, 0x7f0000d1c700);  // a dict, say
  PythonStackDecoder d(fake.reader(), {}, [](std::uint32_t pid) { return pid == 7 ? kCodeType : 0; });
  PythonStack out;
  auto s = sample(0x030c, {{kHot, kUnits}});
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "<code 0x1000>");
  EXPECT_EQ(out.frames[0].code->file, "");
  EXPECT_EQ(d.counters().unnamed, 1u);
  EXPECT_EQ(d.counters().codes, 0u);
  fake.codes[kHot].type = kCodeType;
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "hot");
  EXPECT_EQ(fake.reads, 2);
  // A process the sampler no longer samples (exec'd) has no code type: nothing is named.
  auto other = sample(0x030c, {{kHot, kUnits}});
  other.pid = 9;
  ASSERT_TRUE(d.decode(&other, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "<code 0x1000>");
  EXPECT_EQ(d.counters().unnamed, 2u);
}

// Read only after the sampled code object was freed and a smaller one allocated at its
// address: the one read did not run the frame, which stays unnamed; it is kept for later
// samples inside it.
TEST(PythonStacks, CodeReadAfterItsReplacementIsNotGuessed) {
  FakeCodes fake;
  fake.codes[kHot] = sized("gen_2", 10);
  PythonStackDecoder d(fake.reader());
  PythonStack out;
  auto s = sample(0x030c, {{kHot, unit(25)}});
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "<code 0x1000>");
  EXPECT_EQ(d.counters().unnamed, 1u);
  auto inside = sample(0x030c, {{kHot, kUnits + 2}});
  ASSERT_TRUE(d.decode(&inside, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "gen_2");
  EXPECT_EQ(fake.reads, 1);
}

TEST(PythonStacks, FlagsAndEmptyStacks) {
  FakeCodes fake;
  PythonStackDecoder d(fake.reader());
  auto s = sample(0x030d, {});
  s.flags = EACGM_PY_NO_THREAD;
  PythonStack out;
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_HEADER, out));
  EXPECT_TRUE(out.no_thread);
  EXPECT_FALSE(out.truncated);
  EXPECT_TRUE(out.frames.empty());
}

TEST(PythonStacks, MalformedRecords) {
  FakeCodes fake;
  PythonStackDecoder d(fake.reader());
  PythonStack out;
  auto s = sample(0x030c, {{kHot, 0}, {kMain, 0}});
  EXPECT_FALSE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));  // shorter than its depth says
  EXPECT_FALSE(d.decode(&s, 8, out));                        // shorter than the header
  auto old = sample(0x0307, {});                             // no layout for 3.7
  EXPECT_FALSE(d.decode(&old, EACGM_PY_SAMPLE_HEADER, out));
  auto deep = sample(0x030c, {});
  deep.depth = EACGM_PY_MAX_DEPTH + 1;
  EXPECT_FALSE(d.decode(&deep, sizeof(deep), out));
  EXPECT_EQ(d.counters().malformed, 4u);
  EXPECT_EQ(d.counters().samples, 0u);
}

TEST(PythonStacks, ForgetsGoneProcesses) {
  FakeCodes fake;
  fake.codes[kHot] = info("hot", 3, kUnits);
  PythonStackDecoder d(fake.reader());
  auto s = sample(0x030c, {{kHot, 0}});
  PythonStack out;
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(d.forget_unless([](std::uint32_t pid) { return pid != 7; }), 1u);
  EXPECT_EQ(d.forget_unless([](std::uint32_t) { return false; }), 0u);
}

// A sample taken inside a traced waiting call ends in that call's native frame, named
// once per probe (again when its id has a new owner); an unknown probe adds none.
TEST(PythonStacks, TracedCallEndsTheStack) {
  FakeCodes fake;
  fake.codes[kHot] = info("hot", 3, kUnits);
  std::map<std::uint32_t, std::shared_ptr<const ProbeInfo>> probes;
  auto sync = std::make_shared<ProbeInfo>();
  sync->function = "cuStreamSynchronize";
  sync->spec.domain = "cuda_driver";
  probes[42] = sync;
  PythonStackDecoder d(fake.reader(), [&](std::uint32_t id) -> std::shared_ptr<const ProbeInfo> {
    auto it = probes.find(id);
    return it == probes.end() ? nullptr : it->second;
  });
  auto s = sample(0x030c, {{kHot, kUnits}});
  s.flags = EACGM_PY_IN_CALL;
  s.call_probe = 42;
  PythonStack out;
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
  ASSERT_EQ(out.frames.size(), 2u);
  EXPECT_TRUE(out.frames[0].code->native);
  EXPECT_EQ(out.frames[0].code->function, "[cuda_driver] cuStreamSynchronize");
  EXPECT_EQ(out.frames[1].code->function, "hot");
  const PythonCode* first = out.frames[0].code.get();
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code.get(), first);  // made once
  EXPECT_EQ(d.counters().in_calls, 2u);

  auto nccl = std::make_shared<ProbeInfo>();
  nccl->function = "ncclAllReduce";
  nccl->spec.domain = "nccl";
  probes[42] = nccl;  // the id's new owner
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames[0].code->function, "[nccl] ncclAllReduce");

  s.call_probe = 7;  // unknown
  ASSERT_TRUE(d.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
  ASSERT_EQ(out.frames.size(), 1u);
  EXPECT_EQ(out.frames[0].code->function, "hot");
  // No Python frames: no native frame either (the shares are of samples in Python code).
  auto bare = sample(0x030c, {});
  bare.flags = EACGM_PY_IN_CALL;
  bare.call_probe = 42;
  ASSERT_TRUE(d.decode(&bare, EACGM_PY_SAMPLE_HEADER, out));
  EXPECT_TRUE(out.frames.empty());
  // Without a probe lookup, the flag changes nothing.
  PythonStackDecoder plain(fake.reader());
  ASSERT_TRUE(plain.decode(&s, EACGM_PY_SAMPLE_SIZE(1), out));
  EXPECT_EQ(out.frames.size(), 1u);
  EXPECT_EQ(d.counters().in_calls, 3u);
}

}  // namespace
}  // namespace eacgm::ingest
