// EventStream's size limit (--max-size): whole lines only, the output a prefix of the
// stream (nothing written after the first line left out), what is left out counted,
// and the limit said once.
#include "export/event_stream.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "builtin_probe.h"
#include "export/event_format.h"
#include "output_file_test.h"

namespace eacgm::exporting {
namespace {

CallEvent call(const std::string& comm, std::uint32_t pid = 4242) {
  CallEvent e;
  e.probe = test::builtin_probe("cudaMalloc");
  e.has_exit = true;
  e.dur_ns = 1000;
  e.pid = pid;
  e.tid = pid;
  e.nargs = static_cast<std::uint8_t>(e.probe->spec.args.size());
  std::snprintf(e.comm.data(), e.comm.size(), "%s", comm.c_str());
  return e;
}

std::size_t line_size(const CallEvent& e) {
  fmt::memory_buffer b;
  append_jsonl(b, e);
  return b.size();
}

class EventStreamLimit : public test::OutputFileTest {
 protected:
  std::unique_ptr<EventStream> stream(std::uint64_t max_bytes) {
    return std::make_unique<EventStream>(file_, EventStream::Format::kJsonLines, std::chrono::seconds(1),
                                         max_bytes, record_limit());
  }

  std::vector<nlohmann::json> lines() {
    std::vector<nlohmann::json> out;
    std::istringstream in(written());
    std::string line;
    while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
    return out;
  }
};

TEST_F(EventStreamLimit, WritesWholeLinesUpToTheLimitAndCountsTheRest) {
  const auto e = call("cuda_calls");
  const std::size_t n = line_size(e);
  const std::uint64_t limit = 2 * n + n / 2;  // room for two and a half lines
  auto s = stream(limit);
  std::vector<CallEvent> four(4, e);
  s->on_calls(four);
  s->flush();
  const std::string out = written();
  EXPECT_EQ(out.size(), 2 * n);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.back(), '\n');
  EXPECT_EQ(lines().size(), 2u);
  EXPECT_EQ(s->output().bytes_written(), 2 * n);
  EXPECT_EQ(s->output().lines_not_written(), 2u);
  EXPECT_EQ(limits_, std::vector<std::uint64_t>{limit});
  EXPECT_EQ(s->output().write_errors(), 0u);
}

TEST_F(EventStreamLimit, NothingIsWrittenAfterTheFirstLineLeftOut) {
  // A short line that would still fit the room left must not follow a longer one that
  // did not: the output stays a prefix of the stream, without holes.
  const auto long_line = call("a_long_comm_nam", 4000000);
  const auto short_line = call("x", 1);
  const std::size_t nl = line_size(long_line), ns = line_size(short_line);
  ASSERT_GT(nl, ns + 8);
  auto s = stream(nl + ns + 4);
  std::vector<CallEvent> first{long_line, long_line};
  s->on_calls(first);
  s->flush();
  EXPECT_EQ(s->output().lines_not_written(), 1u);
  std::vector<CallEvent> later{short_line};
  s->on_calls(later);
  s->flush();
  EXPECT_EQ(written().size(), nl) << written();
  ASSERT_EQ(lines().size(), 1u);
  EXPECT_EQ(lines()[0]["comm"], "a_long_comm_nam");
  EXPECT_EQ(s->output().lines_not_written(), 2u);
  EXPECT_EQ(limits_.size(), 1u) << "the limit is said once";
}

TEST_F(EventStreamLimit, ALimitBelowTheFirstLineWritesNothing) {
  const auto e = call("cuda_calls");
  auto s = stream(line_size(e) - 1);
  std::vector<CallEvent> three(3, e);
  s->on_calls(three);
  s->on_end(CounterValues{});
  EXPECT_EQ(written(), "");
  EXPECT_EQ(s->output().lines_not_written(), 3u);
  EXPECT_EQ(limits_.size(), 1u);
}

TEST_F(EventStreamLimit, ZeroMeansNoLimit) {
  const auto e = call("cuda_calls");
  auto s = stream(0);
  std::vector<CallEvent> many(1000, e);
  s->on_calls(many);
  s->on_end(CounterValues{});
  EXPECT_EQ(written().size(), 1000 * line_size(e));
  EXPECT_EQ(s->output().lines_not_written(), 0u);
  EXPECT_TRUE(limits_.empty());
}

TEST_F(EventStreamLimit, AnExactFitIsNotCut) {
  const auto e = call("cuda_calls");
  auto s = stream(3 * line_size(e));
  std::vector<CallEvent> three(3, e);
  s->on_calls(three);
  s->flush();
  EXPECT_EQ(lines().size(), 3u);
  EXPECT_EQ(s->output().lines_not_written(), 0u);
  EXPECT_TRUE(limits_.empty());
}

}  // namespace
}  // namespace eacgm::exporting
