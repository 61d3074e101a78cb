// The governance protocol: every message round-trips; anything malformed is refused
// with its reason, never half-read.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "govern/protocol/codec.h"

namespace eacgm::govern::protocol {
namespace {

Decoded round_trip(const Message& m, std::uint32_t id) {
  Frame f;
  EXPECT_TRUE(encode(m, id, &f));
  Decoded d;
  EXPECT_EQ(decode(f.bytes, f.size, &d), DecodeStatus::kOk);
  EXPECT_EQ(d.consumed, f.size);
  EXPECT_EQ(d.request_id, id);
  return d;
}

TEST(Protocol, RoundTripsEveryMessage) {
  auto h = std::get<Hello>(round_trip(Hello{4242, "train-a", "s3cret"}, 7).message);
  EXPECT_EQ(h.pid, 4242u);
  EXPECT_EQ(h.tenant, "train-a");
  EXPECT_EQ(h.secret, "s3cret");
  auto r = std::get<HelloReply>(round_trip(HelloReply{"train-a", 1ull << 40, 30000}, 8).message);
  EXPECT_EQ(r.memory_limit, 1ull << 40);
  EXPECT_EQ(r.max_slice_us, 30000u);
  auto t = std::get<TokenRequest>(round_trip(TokenRequest{3, 12345, 678}, 9).message);
  EXPECT_EQ(t.device, 3);
  EXPECT_EQ(t.used_us, 12345u);
  EXPECT_EQ(t.predicted_us, 678u);
  auto g = std::get<TokenGrant>(round_trip(TokenGrant{63, 0xffffffffu}, 10).message);
  EXPECT_EQ(g.device, 63);
  EXPECT_EQ(g.slice_us, 0xffffffffu);
  auto mr = std::get<MemReserve>(round_trip(MemReserve{1, ~0ull}, 11).message);
  EXPECT_EQ(mr.bytes, ~0ull);
  auto rep = std::get<MemReply>(round_trip(MemReply{2, true, 5, 6}, 12).message);
  EXPECT_TRUE(rep.granted);
  EXPECT_EQ(rep.used, 5u);
  EXPECT_EQ(rep.limit, 6u);
  EXPECT_EQ(std::get<MemRelease>(round_trip(MemRelease{0, 99}, 13).message).bytes, 99u);
  EXPECT_EQ(std::get<MemQuery>(round_trip(MemQuery{5}, 14).message).device, 5);
  auto e = std::get<ErrorReply>(round_trip(ErrorReply{ErrorCode::kBadDevice, "GPU 9"}, 15).message);
  EXPECT_EQ(e.code, ErrorCode::kBadDevice);
  EXPECT_EQ(e.message, "GPU 9");
}

TEST(Protocol, HeaderLayoutIsFixed) {
  Frame f;
  ASSERT_TRUE(encode(MemQuery{1}, 0x01020304, &f));
  const std::uint8_t expected[] = {'E', 'A', 'G', 'V', 1, 0, 8, 0, 2, 0, 0, 0, 4, 3, 2, 1, 1, 0};
  ASSERT_EQ(f.size, sizeof expected);
  EXPECT_EQ(std::memcmp(f.bytes, expected, sizeof expected), 0);
}

TEST(Protocol, PrefixesNeedMore) {
  Frame f;
  ASSERT_TRUE(encode(Hello{1, "t", ""}, 1, &f));
  Decoded d;
  for (std::size_t n = 1; n < f.size; ++n) EXPECT_EQ(decode(f.bytes, n, &d), DecodeStatus::kNeedMore) << n;
}

TEST(Protocol, RejectsMalformedHeaders) {
  Frame f;
  ASSERT_TRUE(encode(MemQuery{1}, 1, &f));
  Decoded d;
  auto with = [&](std::size_t at, std::uint8_t v) {
    std::vector<std::uint8_t> b(f.bytes, f.bytes + f.size);
    b[at] = v;
    return decode(b.data(), b.size(), &d);
  };
  EXPECT_EQ(with(0, 'X'), DecodeStatus::kBadMagic);
  EXPECT_EQ(decode(reinterpret_cast<const std::uint8_t*>("GET"), 3, &d), DecodeStatus::kBadMagic);
  EXPECT_EQ(with(4, 2), DecodeStatus::kBadVersion);
  EXPECT_EQ(with(6, 0), DecodeStatus::kBadType);
  EXPECT_EQ(with(6, 10), DecodeStatus::kBadType);
  EXPECT_EQ(with(9, 0x10), DecodeStatus::kTooLong);  // 4098 bytes > kMaxPayload
  EXPECT_EQ(with(8, 3), DecodeStatus::kNeedMore);    // claims one byte more than sent
}

TEST(Protocol, RejectsPayloadsThatDoNotMatchTheirType) {
  Decoded d;
  auto frame = [](std::uint16_t type, std::vector<std::uint8_t> payload) {
    std::vector<std::uint8_t> b = {'E',
                                   'A',
                                   'G',
                                   'V',
                                   1,
                                   0,
                                   static_cast<std::uint8_t>(type),
                                   0,
                                   static_cast<std::uint8_t>(payload.size()),
                                   0,
                                   0,
                                   0,
                                   0,
                                   0,
                                   0,
                                   0};
    b.insert(b.end(), payload.begin(), payload.end());
    return b;
  };
  auto status = [&](std::vector<std::uint8_t> b) { return decode(b.data(), b.size(), &d); };
  EXPECT_EQ(status(frame(8, {1, 0})), DecodeStatus::kOk);
  EXPECT_EQ(status(frame(8, {1, 0, 0})), DecodeStatus::kBadPayload) << "trailing byte";
  EXPECT_EQ(status(frame(8, {1})), DecodeStatus::kBadPayload) << "short field";
  EXPECT_EQ(status(frame(8, {64, 0})), DecodeStatus::kBadPayload) << "device out of range";
  EXPECT_EQ(status(frame(6, {0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})),
            DecodeStatus::kBadPayload)
      << "boolean that is neither 0 nor 1";
  EXPECT_EQ(status(frame(1, {1, 0, 0, 0, 2, 'a', '\n', 0})), DecodeStatus::kBadPayload)
      << "control character";
  EXPECT_EQ(status(frame(1, {1, 0, 0, 0, 5, 'a', 0})), DecodeStatus::kBadPayload)
      << "string past the payload";
  std::vector<std::uint8_t> long_name = {1, 0, 0, 0, 65};
  long_name.insert(long_name.end(), 65, 'a');
  long_name.push_back(0);
  EXPECT_EQ(status(frame(1, long_name)), DecodeStatus::kBadPayload) << "name over 64";
  EXPECT_EQ(status(frame(9, {7, 0, 0})), DecodeStatus::kBadPayload) << "unknown error code";
}

TEST(Protocol, RefusesToEncodeOversizedStrings) {
  Frame f;
  EXPECT_FALSE(encode(Hello{1, std::string(65, 'a'), ""}, 1, &f));
  EXPECT_FALSE(encode(Hello{1, "a", std::string(129, 's')}, 1, &f));
}

}  // namespace
}  // namespace eacgm::govern::protocol
