// The pickle writer and the flight-recorder dump, decoded by python3's pickle (the reader
// PyTorch's analyzer uses) when python3 is installed.
#include "export/flight_recorder_dump.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../analysis/nccl_events.h"
#include "export/pickle_writer.h"

namespace eacgm::exporting {
namespace {

const char* const kPython = "/usr/bin/python3";

// What python3 reads of `bytes` (its repr), or "" when python3 failed.
std::string decoded(const std::string& bytes) {
  const auto path = std::filesystem::temp_directory_path() / ("eacgm_pickle_" + std::to_string(::getpid()));
  {
    std::ofstream out(path, std::ios::binary);
    out << bytes;
  }
  const std::string cmd = std::string(kPython) + " " +
                          EACGM_SOURCE_DIR "/tests/unit/export/flight_dump_decode.py " + path.string();
  std::string text;
  if (std::FILE* p = ::popen(cmd.c_str(), "r")) {
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) text.append(buf.data(), n);
    if (::pclose(p) != 0) text.clear();
  }
  std::filesystem::remove(path);
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

class PickleDecode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kPython)) GTEST_SKIP() << kPython << " is not installed";
  }
};

TEST_F(PickleDecode, ScalarsAtEveryIntegerWidth) {
  PickleWriter w;
  w.begin_list();
  const std::int64_t values[] = {0,          255,         256,         65535,
                                 65536,      -1,          -129,        2147483647,
                                 2147483648, -2147483648, -2147483649, 1764950000123456789,
                                 INT64_MAX,  INT64_MIN,   128LL << 24};
  for (std::int64_t v : values) w.integer(v);
  w.none().boolean(true).boolean(false).real(1.5).real(-0.1).str("").str("naïve \"q\"");
  w.end();
  EXPECT_EQ(
      decoded(w.finish()),
      "[0, 255, 256, 65535, 65536, -1, -129, 2147483647, 2147483648, -2147483648, -2147483649, "
      "1764950000123456789, 9223372036854775807, -9223372036854775808, 2147483648, None, True, False, 1.5, "
      "-0.1, '', 'naïve \"q\"']");
}

TEST_F(PickleDecode, NestedContainersEmptyOnesIncluded) {
  PickleWriter w;
  w.begin_dict();
  w.str("t").begin_tuple().str("0x1").str("undefined").end();
  w.str("e").begin_list().end();
  w.str("d").begin_dict().end();
  w.str("l").begin_list().begin_list().integer(3).end().begin_tuple().end().end();
  w.end();
  EXPECT_EQ(decoded(w.finish()), "{'t': ('0x1', 'undefined'), 'e': [], 'd': {}, 'l': [[3], ()]}");
}

analysis::FlightRank two_calls() {
  analysis::FlightRank r;
  r.comm_id = 0xabc;
  r.rank = 1;
  r.nranks = 2;
  r.pid = 4242;
  r.comm = "python";
  r.recorded = 2;
  analysis::FlightEntry a;
  a.record_id = 0;
  a.collective_seq_id = 0;
  a.kind = analysis::NcclCollective::kAllReduce;
  a.count = 1024;
  a.has_count = true;
  a.datatype = 7;  // ncclFloat32
  a.red_op = 0;
  a.tid = 4243;
  a.entered_ns = 1764950000000000000;
  a.returned_ns = 1764950000000010000;
  analysis::FlightEntry b = a;
  b.record_id = 1;
  b.collective_seq_id = 1;
  b.kind = analysis::NcclCollective::kAllGather;
  b.count = 8;
  b.datatype = 9;  // ncclBfloat16
  b.state = analysis::FlightState::kStarted;
  b.returned_ns = 0;
  auto stack = std::make_shared<PythonStack>();
  stack->frames.push_back({std::make_shared<PythonCode>(PythonCode{"[nccl] ncclAllGather", "", 0, true}), 0});
  stack->frames.push_back({std::make_shared<PythonCode>(PythonCode{"step", "/w/train.py", 40, false}), 42});
  b.python_stack = stack;
  r.entries = {a, b};
  return r;
}

TEST_F(PickleDecode, OneRanksDumpHasTheKeysAndTypesTheAnalyzerReads) {
  EXPECT_EQ(
      decoded(flight_recorder_pickle(two_calls())),
      "{'version': '2.10', "
      "'pg_config': {'0x0000000000000abc': {'name': '0x0000000000000abc', 'desc': 'undefined', 'ranks': '[0, "
      "1]'}}, "
      "'pg_status': {'0x0000000000000abc': {'last_enqueued_collective': 1, 'last_started_collective': 1, "
      "'last_completed_collective': 0}}, "
      "'entries': [{'record_id': 0, 'pg_id': 0, 'process_group': ('0x0000000000000abc', 'undefined'), "
      "'collective_seq_id': 0, 'p2p_seq_id': 0, 'op_id': 0, 'profiling_name': 'nccl:all_reduce', "
      "'time_created_ns': 1764950000000000000, 'duration_ms': None, 'input_sizes': [[1024]], "
      "'input_dtypes': ['Float'], 'output_sizes': [[1024]], 'output_dtypes': ['Float'], 'state': "
      "'completed', "
      "'time_discovered_started_ns': 1764950000000000000, 'time_discovered_completed_ns': "
      "1764950000000010000, "
      "'retired': True, 'timeout_ms': 0, 'is_p2p': False, 'thread_id': '4243', 'thread_name': 'python', "
      "'frames': []}, "
      "{'record_id': 1, 'pg_id': 0, 'process_group': ('0x0000000000000abc', 'undefined'), "
      "'collective_seq_id': 1, 'p2p_seq_id': 0, 'op_id': 1, 'profiling_name': 'nccl:all_gather', "
      "'time_created_ns': 1764950000000000000, 'duration_ms': None, 'input_sizes': [[8]], "
      "'input_dtypes': ['BFloat16'], 'output_sizes': [[16]], 'output_dtypes': ['BFloat16'], 'state': "
      "'started', "
      "'time_discovered_started_ns': 1764950000000000000, 'time_discovered_completed_ns': None, "
      "'retired': False, 'timeout_ms': 0, 'is_p2p': False, 'thread_id': '4243', 'thread_name': 'python', "
      "'frames': [{'name': 'step', 'filename': '/w/train.py', 'line': 42}]}], "
      "'eacgm': {'pid': 4242, 'comm': 'python', 'exited': False, 'recorded': 2, 'state_is_host_side': "
      "True}}");
}

TEST(FlightRecorderDump, NamesAndSizesAsPyTorchMatchesThem) {
  analysis::FlightEntry e;
  e.kind = analysis::NcclCollective::kSend;
  e.peer = 3;
  EXPECT_EQ(flight_profiling_name(e, 1), "nccl:send 1->3");
  e.kind = analysis::NcclCollective::kRecv;
  EXPECT_EQ(flight_profiling_name(e, 3), "nccl:recv 3<-3");
  e.kind = analysis::NcclCollective::kReduceScatter;
  EXPECT_EQ(flight_profiling_name(e, 0), "nccl:reduce_scatter");
  e.count = 10;
  e.has_count = true;
  const FlightSizes s = flight_sizes(e, 4);
  EXPECT_EQ(s.input, std::vector<std::int64_t>{40});
  EXPECT_EQ(s.output, std::vector<std::int64_t>{10});
  e.has_count = false;
  EXPECT_TRUE(flight_sizes(e, 4).input.empty());
  EXPECT_EQ(flight_torch_dtype(6), "Half");
  EXPECT_EQ(flight_torch_dtype(42), "Undefined");
  EXPECT_EQ(flight_comm_name(0xabc), "0x0000000000000abc");
}

// PyTorch's analyzer on the dumps of two ranks, rank 1 stopped before all-reduce #20 while
// rank 0 waits in it, where python3 imports it (a device with torch 2.5 or later, or
// PYTHONPATH set to a copy of torch/distributed/flight_recorder): it names rank 1.
TEST_F(PickleDecode, PyTorchsAnalyzerNamesTheRankThatStopped) {
  if (std::system(
          (std::string(kPython) + " -c 'import torch.distributed.flight_recorder.fr_trace' 2>/dev/null")
              .c_str()) != 0)
    GTEST_SKIP() << "python3 cannot import torch.distributed.flight_recorder";
  analysis::NcclFlightRecorder::Options o;
  o.entries = 8;
  analysis::NcclFlightRecorder rec(o);
  auto ar = analysis::testing::nccl_probe("ncclAllReduce");
  for (int i = 0; i <= 20; ++i) {
    for (int rank = 0; rank < 2; ++rank) {
      analysis::testing::NcclCall c;
      c.rank = rank;
      c.ts_ns = 1'764'950'000'000'000'000ULL + static_cast<std::uint64_t>(i) * 1'000'000;
      const CallEvent e = analysis::testing::nccl_call(ar, c);
      if (i < 20) {
        rec.add(e);
      } else if (rank == 0) {
        InflightCall in;
        in.call = e;
        in.call.has_exit = false;
        in.entry_mono_ns = 1'000'000'000;
        rec.add_inflight({&in, 1}, 9'000'000'000);
      }
    }
  }
  const auto dir = std::filesystem::temp_directory_path() / ("eacgm_fr_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const auto& r : rec.record().ranks) {
    std::ofstream(dir / (std::string(kFlightDumpPrefix) + std::to_string(r.rank)), std::ios::binary)
        << flight_recorder_pickle(r);
  }
  const std::string cmd =
      std::string(kPython) + " -m torch.distributed.flight_recorder.fr_trace " + dir.string() + " 2>&1";
  std::string out;
  if (std::FILE* p = ::popen(cmd.c_str(), "r")) {
    std::array<char, 4096> buf{};
    std::size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
    ::pclose(p);
  }
  std::filesystem::remove_all(dir);
  EXPECT_NE(out.find("Not all ranks joining collective, sequence number: 20"), std::string::npos) << out;
  EXPECT_NE(out.find("missing ranks: {1}"), std::string::npos) << out;
  EXPECT_NE(out.find("collective: nccl:all_reduce"), std::string::npos) << out;
}

}  // namespace
}  // namespace eacgm::exporting
