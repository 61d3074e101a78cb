// The JSON string writer: escapes, and any bytes a traced process gives (thread and
// kernel names) still make a string a strict parser accepts.
#include "export/json_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace eacgm::exporting {
namespace {

std::string as_json_string(std::string_view s) {
  fmt::memory_buffer b;
  put_json_string(b, s);
  return std::string(b.data(), b.size());
}

TEST(JsonWriter, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(as_json_string("a\"b\\c\n\r\t\x01\x1f"), R"("a\"b\\c\n\r\t\u0001\u001f")");
  EXPECT_EQ(nlohmann::json::parse(as_json_string("a\"b\\c\n\x01")).get<std::string>(), "a\"b\\c\n\x01");
}

TEST(JsonWriter, KeepsWellFormedUtf8AsIs) {
  const std::string s = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80 \xed\x9f\xbf";  // é € 🚀 U+D7FF
  EXPECT_EQ(as_json_string(s), "\"" + s + "\"");
  EXPECT_EQ(nlohmann::json::parse(as_json_string(s)).get<std::string>(), s);
}

TEST(JsonWriter, ReplacesEachByteOfIllFormedUtf8) {
  // A lone continuation byte, a lead byte cut off (a 15-byte thread name may end inside
  // a character), an overlong form, a surrogate, a code point above U+10FFFF, 0xff.
  const std::string bad =
      std::string("a\x80") + "b\xe2\x82" + "c\xc0\xaf" + "d\xed\xa0\x80" + "e\xf4\x90\x80\x80" + "f\xff";
  const std::string out = as_json_string(bad);
  nlohmann::json parsed;
  ASSERT_NO_THROW(parsed = nlohmann::json::parse(out)) << out;
  const std::string r = "\xef\xbf\xbd";  // U+FFFD as UTF-8
  EXPECT_EQ(parsed.get<std::string>(),
            "a" + r + "b" + r + r + "c" + r + r + "d" + r + r + r + "e" + r + r + r + r + "f" + r);
}

TEST(JsonWriter, Utf8SequenceLength) {
  EXPECT_EQ(utf8_sequence_length(""), 0u);
  EXPECT_EQ(utf8_sequence_length("a"), 1u);
  EXPECT_EQ(utf8_sequence_length("\xc3\xa9"), 2u);
  EXPECT_EQ(utf8_sequence_length("\xc3"), 0u);
  EXPECT_EQ(utf8_sequence_length("\xe0\x9f\x80"), 0u) << "overlong";
  EXPECT_EQ(utf8_sequence_length("\xf0\x9f\x9a\x80"), 4u);
  EXPECT_EQ(utf8_sequence_length("\xf5\x80\x80\x80"), 0u);
}

}  // namespace
}  // namespace eacgm::exporting
