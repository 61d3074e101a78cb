// Record decoding: sizes and types are checked, fields land where the ABI says.
#include "ingest/record_decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bpf/events.h"
#include "core/clock.h"

namespace eacgm::ingest {
namespace {

ProbeInfo malloc_probe() {
  ProbeInfo info;
  info.function = "cudaMalloc";
  info.spec.name = "cudaMalloc";
  info.spec.domain = "cuda";
  info.spec.ret = ReturnKind::kInt32;
  info.spec.args = {{"ptr", ArgSource::kRegister, 0, ArgKind::kDerefU64, ArgFormat::kHex, true},
                    {"size", ArgSource::kRegister, 1, ArgKind::kRaw, ArgFormat::kUnsigned, false}};
  return info;
}

eacgm_record call_record(std::uint32_t probe_id) {
  eacgm_record r{};
  r.type = EACGM_REC_CALL;
  r.flags = EACGM_REC_HAS_EXIT;
  r.ts_ns = monotonic_ns();
  r.dur_ns = 1234;
  r.pid = 42;
  r.tid = 43;
  r.probe_id = probe_id;
  r.ret = 35;
  r.nargs = 2;
  r.args[0] = 0x7f0000001000;
  r.args[1] = 1 << 20;
  std::strcpy(r.comm, "python3");
  return r;
}

TEST(RecordDecoder, DecodesCallFields) {
  probe::ProbeTable table;
  auto probe = table.add(malloc_probe());
  RecordDecoder decoder(table);
  eacgm_record r = call_record(probe->id);
  CallEvent e;
  std::uint64_t before = realtime_ns();
  ASSERT_EQ(decoder.decode(&r, sizeof(r), e), RecordKind::kCall);
  EXPECT_EQ(e.pid, 42u);
  EXPECT_EQ(e.tid, 43u);
  EXPECT_EQ(e.dur_ns, 1234u);
  EXPECT_EQ(e.ret, 35);
  EXPECT_TRUE(e.has_exit);
  EXPECT_TRUE(e.is_error());
  EXPECT_EQ(e.comm_view(), "python3");
  EXPECT_EQ(e.function(), "cudaMalloc");
  EXPECT_EQ(e.domain(), "cuda");
  EXPECT_EQ(e.args[0], 0x7f0000001000u);
  EXPECT_EQ(e.args[1], 1u << 20);
  EXPECT_EQ(e.nargs, 2);
  // Monotonic stamps become wall-clock time, within the test's own window.
  EXPECT_GE(e.ts_ns + 1'000'000, before);
  EXPECT_LE(e.ts_ns, realtime_ns());
  EXPECT_EQ(decoder.counters().calls, 1u);
  EXPECT_EQ(e.run_delay_ns, 0u);  // no EACGM_REC_RUN_DELAY: unknown
}

// The run delay counts only where the kernel said it is kept, and never beyond the call.
TEST(RecordDecoder, RunDelayIsTheCallsWaitForACpu) {
  probe::ProbeTable table;
  auto probe = table.add(malloc_probe());
  RecordDecoder decoder(table);
  eacgm_record r = call_record(probe->id);
  r.flags |= EACGM_REC_RUN_DELAY;
  r.run_delay_ns = 1000;
  CallEvent e;
  ASSERT_EQ(decoder.decode(&r, sizeof(r), e), RecordKind::kCall);
  EXPECT_EQ(e.run_delay_ns, 1000u);
  r.run_delay_ns = 5000;
  ASSERT_EQ(decoder.decode(&r, sizeof(r), e), RecordKind::kCall);
  EXPECT_EQ(e.run_delay_ns, 1234u);
  r.flags = 0;  // entry only
  ASSERT_EQ(decoder.decode(&r, sizeof(r), e), RecordKind::kCall);
  EXPECT_EQ(e.run_delay_ns, 0u);
}

// A split probe's return (bpf/events.h EACGM_PROBE_SPLIT): the return value and, in
// args[0], the stack pointer that pairs it with its entry record.
TEST(RecordDecoder, SplitReturnRecordCarriesReturnAndStackPointer) {
  probe::ProbeTable table;
  auto probe = table.add(malloc_probe());
  RecordDecoder decoder(table);
  eacgm_record r = call_record(probe->id);
  r.dur_ns = 0;
  r.ret = 0x7f00deadbeef;
  r.nargs = 1;
  r.args[0] = 0x7ffc12345678;
  CallEvent e;
  ASSERT_EQ(decoder.decode(&r, sizeof(r), e), RecordKind::kCall);
  EXPECT_TRUE(e.has_exit);
  EXPECT_EQ(e.dur_ns, 0u);
  EXPECT_EQ(e.ret, 0x7f00deadbeef);
  EXPECT_EQ(e.nargs, 1);
  EXPECT_EQ(e.args[0], 0x7ffc12345678u);
}

TEST(RecordDecoder, EntryOnlyRecordHasNoDurationOrReturn) {
  probe::ProbeTable table;
  auto probe = table.add(malloc_probe());
  RecordDecoder decoder(table);
  eacgm_record r = call_record(probe->id);
  r.flags = 0;
  CallEvent e;
  ASSERT_EQ(decoder.decode(&r, sizeof(r), e), RecordKind::kCall);
  EXPECT_FALSE(e.has_exit);
  EXPECT_EQ(e.dur_ns, 0u);
  EXPECT_EQ(e.ret, 0);
  EXPECT_FALSE(e.is_error());
}

TEST(RecordDecoder, RejectsWrongSizeAndType) {
  probe::ProbeTable table;
  table.add(malloc_probe());
  RecordDecoder decoder(table);
  eacgm_record r = call_record(0);
  CallEvent e;
  EXPECT_EQ(decoder.decode(&r, sizeof(r) - 8, e), RecordKind::kMalformed);
  r.type = 99;
  EXPECT_EQ(decoder.decode(&r, sizeof(r), e), RecordKind::kMalformed);
  EXPECT_EQ(decoder.counters().malformed, 2u);
  EXPECT_EQ(decoder.counters().calls, 0u);
}

TEST(RecordDecoder, UnknownProbeIsCountedNotGuessed) {
  probe::ProbeTable table;
  RecordDecoder decoder(table);
  eacgm_record r = call_record(7);
  CallEvent e;
  EXPECT_EQ(decoder.decode(&r, sizeof(r), e), RecordKind::kUnknownProbe);
  EXPECT_EQ(decoder.counters().unknown_probe, 1u);
}

TEST(RecordDecoder, ProbesAddedAfterTheFirstRecordAreFound) {
  probe::ProbeTable table;
  table.add(malloc_probe());
  RecordDecoder decoder(table);
  CallEvent e;
  eacgm_record first = call_record(0);
  ASSERT_EQ(decoder.decode(&first, sizeof(first), e), RecordKind::kCall);
  auto later = table.add(malloc_probe());
  eacgm_record second = call_record(later->id);
  ASSERT_EQ(decoder.decode(&second, sizeof(second), e), RecordKind::kCall);
  EXPECT_EQ(e.probe->id, later->id);
}

TEST(RecordDecoder, DiscoveryHints) {
  probe::ProbeTable table;
  RecordDecoder decoder(table);
  eacgm_record r{};
  r.type = EACGM_REC_EXEC;
  r.pid = 99;
  CallEvent e;
  EXPECT_EQ(decoder.decode(&r, sizeof(r), e), RecordKind::kExecHint);
  EXPECT_EQ(e.pid, 99u);
  r.type = EACGM_REC_LIB_LOADED;
  EXPECT_EQ(decoder.decode(&r, sizeof(r), e), RecordKind::kLibraryHint);
  EXPECT_EQ(decoder.counters().hints, 2u);
}

TEST(RecordDecoder, StringArgumentAndTruncationFlag) {
  probe::ProbeTable table;
  auto probe = table.add(malloc_probe());
  RecordDecoder decoder(table);
  eacgm_record r = call_record(probe->id);
  std::memset(r.str, 'a', sizeof(r.str) - 1);
  r.flags |= EACGM_REC_STR_TRUNC;
  CallEvent e;
  ASSERT_EQ(decoder.decode(&r, sizeof(r), e), RecordKind::kCall);
  EXPECT_EQ(e.str.size(), sizeof(r.str) - 1);
  EXPECT_TRUE(e.str_truncated);
  // The next record without a string must not inherit it.
  eacgm_record plain = call_record(probe->id);
  ASSERT_EQ(decoder.decode(&plain, sizeof(plain), e), RecordKind::kCall);
  EXPECT_TRUE(e.str.empty());
}

TEST(RecordDecoder, ShortRecordsEndBeforeTheStringAreasTheyDoNotUse) {
  probe::ProbeTable table;
  auto probe = table.add(malloc_probe());
  RecordDecoder decoder(table);
  // Bytes past the record's size are garbage a decoder must not read as strings.
  std::vector<unsigned char> buf(sizeof(eacgm_record), 'x');
  eacgm_record r = call_record(probe->id);
  std::memcpy(buf.data(), &r, EACGM_REC_SIZE_NO_STR);
  CallEvent e;
  ASSERT_EQ(decoder.decode(buf.data(), EACGM_REC_SIZE_NO_STR, e), RecordKind::kCall);
  EXPECT_EQ(e.args[1], 1u << 20);
  EXPECT_EQ(e.dur_ns, 1234u);
  EXPECT_TRUE(e.str.empty());
  EXPECT_TRUE(e.str2.empty());
  // With str but not str2.
  std::strcpy(r.str, "kernel");
  std::memcpy(buf.data(), &r, EACGM_REC_SIZE_STR);
  ASSERT_EQ(decoder.decode(buf.data(), EACGM_REC_SIZE_STR, e), RecordKind::kCall);
  EXPECT_EQ(e.str, "kernel");
  EXPECT_TRUE(e.str2.empty());
  // Any other size is malformed.
  EXPECT_EQ(decoder.decode(buf.data(), EACGM_REC_SIZE_STR + 8, e), RecordKind::kMalformed);
  EXPECT_EQ(decoder.decode(buf.data(), EACGM_REC_SIZE_NO_STR - 8, e), RecordKind::kMalformed);
}

}  // namespace
}  // namespace eacgm::ingest
