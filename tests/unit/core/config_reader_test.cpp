// The section reader's own rules: numbers in messages written as fmt writes them, values
// read through arrays and tables, sections handed over in the order they were added; and
// its "did you mean": a swapped pair is one edit, nothing far away is guessed, and two
// equally close candidates give no guess.
#include "core/config_reader.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/edit_distance.h"

namespace eacgm {
namespace {

Status read_x(const ConfigTable& t, double& x) { return t.read_number("x", 0, 0, x); }

// The message `[t] x = <text>` gives when x must be within 0..0.
std::string range_message(const std::string& text) {
  double x = 0;
  ConfigSections sections;
  sections.add_table<read_x>("t", x);
  Status s = sections.read("[t]\nx = " + text + "\n", "f.toml");
  return s ? std::string("<accepted>") : s.error();
}

TEST(ConfigReader, NumbersReadAsFmtWritesThem) {
  std::vector<double> values = {
      0.05, 3600,  100000, 1e15,    1e16,      1.5e-7,     0.0001, 0.00012,
      -0.2, 86401, 1e300,  -1e-300, 0.1 + 0.2, 123456.789, 2.5e-5, 9.999999999999999e15};
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-30, 30);
  for (int i = 0; i < 200; ++i) values.push_back(std::pow(10.0, exponent(rng)) * (i % 2 ? 1 : -1));
  for (double v : values) {
    if (v == 0) continue;
    const std::string text = fmt::format("{:.17g}", v);
    EXPECT_EQ(range_message(text), fmt::format("f.toml:2:5: [t]: x = {} is out of range 0..0", v)) << text;
  }
  EXPECT_EQ(range_message("nan"), "f.toml:2:5: [t]: x = nan is out of range 0..0");
  EXPECT_EQ(range_message("-inf"), "f.toml:2:5: [t]: x = -inf is out of range 0..0");
  EXPECT_EQ(range_message("7"), "f.toml:2:5: [t]: x = 7 is out of range 0..0");
}

// A section that notes its key and its value's type when it is read.
struct Noted {
  std::string key;
  std::vector<std::string>* seen;
};

Status note(const ConfigValue& v, Noted& n) {
  n.seen->push_back(n.key + ":" + std::string(v.type_name()));
  return {};
}

TEST(ConfigReader, SectionsInTheOrderAdded) {
  std::vector<std::string> seen;
  Noted b{"b", &seen}, a{"a", &seen}, list{"list", &seen};
  ConfigSections sections;
  sections.add<note>("b", b);
  sections.add<note>("a", a);
  sections.add<note>("list", list);
  ASSERT_TRUE(sections.read("list = [1, \"x\"]\n[a]\n[b]\n", "f.toml"));
  EXPECT_EQ(seen, (std::vector<std::string>{"b:a table", "a:a table", "list:an array"}));
  EXPECT_EQ(sections.read("[c]\n", "f.toml").error(),
            "f.toml:1:2: unknown key \"c\" (expected one of b, a, list)");
}

// Each item's type, and a table item's name.
Status read_list(const ConfigValue& v, std::vector<std::string>& types) {
  auto items = v.items();
  if (!items) return v.fail("", "not an array");
  for (const ConfigValue& item : *items) {
    types.emplace_back(item.type_name());
    if (auto t = item.table("list item")) {
      std::string name;
      if (auto s = t->read_string("name", name); !s) return s;
      types.push_back(name);
    }
  }
  return {};
}

TEST(ConfigReader, ArraysAndTheirItems) {
  std::vector<std::string> types;
  ConfigSections sections;
  sections.add<read_list>("list", types);
  ASSERT_TRUE(sections.read("list = [1, 2.5, true, { name = \"n\" }, [1]]\n", "f.toml"));
  EXPECT_EQ(types,
            (std::vector<std::string>{"an integer", "a float", "a boolean", "a table", "n", "an array"}));
  EXPECT_EQ(sections.read("list = [{ name = 1 }]\n", "f.toml").error(),
            "f.toml:1:18: list item: name must be a string, not an integer");
  EXPECT_EQ(sections.read("list = 1\n", "f.toml").error(), "f.toml:1:8: not an array");
}

TEST(EditDistance, CountsEdits) {
  EXPECT_EQ(edit_distance("format", "format"), 0u);
  EXPECT_EQ(edit_distance("fromat", "format"), 1u) << "a swapped pair";
  EXPECT_EQ(edit_distance("Format", "format"), 0u) << "case-insensitive";
  EXPECT_EQ(edit_distance("ringbuf_mb", "ringbuf_mib"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(EditDistance, ClosestWord) {
  constexpr std::string_view keys[] = {"interval_s", "sample", "exit", "exec"};
  EXPECT_EQ(closest_word("intervl_s", keys), std::optional<std::string_view>("interval_s"));
  EXPECT_EQ(closest_word("completely_different", keys), std::nullopt);
  EXPECT_EQ(closest_word("exat", keys), std::optional<std::string_view>("exit"));
  EXPECT_EQ(closest_word("exet", keys), std::nullopt) << "exit and exec are equally close";
}

}  // namespace
}  // namespace eacgm
