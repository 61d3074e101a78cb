// libbpf's messages are captured per operation (bounded, latest lines kept), and a BPF
// object built for another record ABI is refused with both versions named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "bpf/events.h"
#include "probe/bpf_tracer.h"

namespace eacgm::probe {
namespace {

using ::testing::HasSubstr;

TEST(LibbpfLogCapture, QuotesTheLastLines) {
  LibbpfLogCapture log;
  EXPECT_EQ(log.last_lines(), "");
  log.append("one\ntwo\n");
  log.append("three\nfour\n");
  EXPECT_EQ(log.last_lines(2), "\n  libbpf: three\n  libbpf: four");
  EXPECT_EQ(log.last_lines(9), "\n  libbpf: one\n  libbpf: two\n  libbpf: three\n  libbpf: four");
}

TEST(LibbpfLogCapture, StaysBoundedKeepingTheLatestWholeLines) {
  LibbpfLogCapture log;
  const std::string line(99, 'x');
  for (int i = 0; i < 2000; ++i) log.append(line + "\n");
  log.append("the reason\n");
  EXPECT_LE(log.text().size(), LibbpfLogCapture::kMaxBytes);
  EXPECT_EQ(log.text().front(), 'x');  // cut at a line start
  EXPECT_THAT(log.last_lines(1), HasSubstr("the reason"));
}

TEST(LibbpfLogCapture, EachOperationStartsEmpty) {
  {
    LibbpfLogCapture first;
    first.append("old failure\n");
  }
  LibbpfLogCapture second;
  EXPECT_EQ(second.text(), "");
  // Captures on other threads are their own.
  std::thread([] {
    LibbpfLogCapture other;
    other.append("elsewhere\n");
  }).join();
  EXPECT_EQ(second.text(), "");
}

TEST(AbiVersion, MatchingVersionLoads) { EXPECT_TRUE(check_abi_version(EACGM_ABI_VERSION)); }

TEST(AbiVersion, OtherVersionIsRefusedNamingBoth) {
  auto st = check_abi_version(EACGM_ABI_VERSION + 1);
  ASSERT_FALSE(st);
  EXPECT_THAT(st.error(), HasSubstr(std::to_string(EACGM_ABI_VERSION + 1)));
  EXPECT_THAT(st.error(), HasSubstr(std::to_string(EACGM_ABI_VERSION)));
  EXPECT_THAT(st.error(), HasSubstr("rebuild"));
}

}  // namespace
}  // namespace eacgm::probe
