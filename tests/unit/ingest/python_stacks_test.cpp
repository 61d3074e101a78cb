// The sample decoder: records to named stacks through a fake code reader, lines from
// each frame's instruction, one read per code object and process, malformed records.
#include "ingest/python_stacks.h"

#include <gtest/gtest.h>

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

eacgm_py_sample sample(std::uint16_t version, std::vector<eacgm_py_frame> frames) {
  eacgm_py_sample s{};
  s.ts_ns = 5;
  s.pid = 7;
  s.tid = 8;
  s.version = version;
  s.depth = static_cast<std::uint16_t>(frames.size());
  std::strcpy(s.comm, "python3.12");
  for (std::size_t i = 0; i < frames.size(); ++i) s.frames[i] = frames[i];
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
