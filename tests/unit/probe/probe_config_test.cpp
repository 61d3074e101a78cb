// catalogs and [[probe]]: a spec's keys, its args' sources, kinds and formats, and one
// failing case per rule, each error checked for its line and column and its key phrase.
#include "probe/probe_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../common/config_text.h"
#include "core/config_reader.h"
#include "core/spec_validate.h"

namespace eacgm::probe {
namespace {

using test::lines;

struct Probes {
  CatalogNames catalogs;
  std::vector<ProbeSpec> specs;
};

void add_probe_sections(ConfigSections& sections, Probes& probes) {
  add_catalogs_section(sections, probes.catalogs);
  add_probe_section(sections, probes.specs);
}

const test::SectionText<Probes> probes(add_probe_sections);

// A probe whose only interesting part is its args line (line 5).
std::string probe_with_args(const char* args, const char* extra = "") {
  return lines({"[[probe]]", "name = \"p\"", "library = \"libfoo.so*\"", "symbol = \"foo\"", args, extra});
}

TEST(ProbeConfig, CatalogsAndSpecs) {
  Result<Probes> r = probes.parse(lines({"catalogs = [\"cuda\", \"nccl\"]", "[[probe]]", "name = \"f\"",
                                         "library = \"libfoo.so*\"", "symbol = \"foo\""}),
                                  "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->catalogs.names, (std::vector<std::string>{"cuda", "nccl"}));
  EXPECT_TRUE(check_catalog_names(r->catalogs, r->specs).ok());
  ASSERT_EQ(r->specs.size(), 1u);
  EXPECT_EQ(r->specs[0].name, "f");
  EXPECT_EQ(r->specs[0].domain, "user");
}

TEST(ProbeConfig, UnknownKeysAreErrorsWithSuggestion) {
  std::string e = probes.error_of(probe_with_args("args = [{ name = \"n\", reg = 1, fromat = \"hex\" }]"));
  EXPECT_THAT(e, StartsWith("eacgm.toml:5:"));
  EXPECT_THAT(e, HasSubstr("probe \"p\": arg \"n\": unknown key \"fromat\" (did you mean "
                           "\"format\"?)"));

  e = probes.error_of(probe_with_args("", "exits = true"));
  EXPECT_THAT(e, StartsWith("eacgm.toml:6:1: probe \"p\": unknown key \"exits\""));
  EXPECT_THAT(e, HasSubstr("did you mean \"exit\"?"));
}

TEST(ProbeConfig, WrongTypes) {
  EXPECT_THAT(probes.error_of(probe_with_args("", "exit = 1")),
              HasSubstr("eacgm.toml:6:8: probe \"p\": exit must be true or false"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = { name = \"n\" }")),
              HasSubstr("eacgm.toml:5:8: probe \"p\": args must be an array of tables"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [1]")),
              HasSubstr("eacgm.toml:5:9: probe \"p\": arg #1 must be a table"));
  EXPECT_THAT(probes.error_of(lines({"[probe]", "name = \"p\""})),
              HasSubstr("write each probe under its own [[probe]] header, not [probe]"));
}

TEST(ProbeConfig, ProbeWaits) {
  Result<Probes> r = probes.parse(probe_with_args("waits = true"), "eacgm.toml");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->specs.at(0).waits);
  EXPECT_FALSE(probes.parse(probe_with_args(""), "eacgm.toml")->specs.at(0).waits);
  EXPECT_THAT(probes.error_of(probe_with_args("waits = 1")),
              HasSubstr("eacgm.toml:5:9: probe \"p\": waits must be true or false, not an integer"));
  EXPECT_THAT(probes.error_of(probe_with_args("waits = true", "exit = false")),
              HasSubstr("eacgm.toml:5:9: probe \"p\": waits = true needs exit = true (the return ends the "
                        "wait)"));
}

TEST(ProbeConfig, Catalogs) {
  EXPECT_THAT(probes.error_of(lines({"", "catalogs = \"cuda\""})),
              HasSubstr("eacgm.toml:2:12: catalogs must be an array of strings"));
  EXPECT_THAT(probes.error_of(lines({"catalogs = []"})), HasSubstr("eacgm.toml:1:12: catalogs is empty"));
  EXPECT_THAT(probes.error_of(lines({"catalogs = [\"cuda\", \"\"]"})),
              HasSubstr("eacgm.toml:1:21: catalogs has an empty name"));
  EXPECT_THAT(probes.error_of(lines({"catalogs = [\"cuda\", 3]"})),
              HasSubstr("eacgm.toml:1:21: catalogs entries must be strings"));
  EXPECT_THAT(probes.error_of(lines({"catalogs = [\"cuda\", \"cuda\"]"})),
              HasSubstr("eacgm.toml:1:21: catalog \"cuda\" is listed twice"));
}

// A name no catalog or probe has is an error at its place in the file, with the name most
// likely meant; a [[probe]]'s name or domain is one too, known once the file is read.
TEST(ProbeConfig, UnknownCatalogNamesItsPlaceAndWhatWasMeant) {
  auto unknown = [](std::initializer_list<const char*> ls) {
    Result<Probes> r = probes.parse(ls);
    if (!r.ok()) return r.error();
    Status s = check_catalog_names(r->catalogs, r->specs);
    return s.ok() ? std::string("<accepted>") : s.error();
  };
  EXPECT_EQ(
      unknown({"", "catalogs = [\"cuda\", \"ncll\"]"}),
      "eacgm.toml:2:21: unknown catalog \"ncll\" (did you mean \"nccl\"?); catalogs: cuda, cuda_driver, "
      "nccl, python, torch (or a probe's name: eacgm probes lists them)");
  EXPECT_THAT(unknown({"catalogs = [\"zzzz\"]"}),
              StartsWith("eacgm.toml:1:13: unknown catalog \"zzzz\"; catalogs: "));
  EXPECT_EQ(unknown({"catalogs = [\"cudaMalloc\", \"cuda_driver\"]"}), "<accepted>");
  EXPECT_EQ(unknown({"catalogs = [\"cuda\", \"mylib\", \"f\"]", "[[probe]]", "name = \"f\"",
                     "domain = \"mylib\"", "library = \"libfoo.so*\"", "symbol = \"foo\""}),
            "<accepted>");
}

TEST(ProbeConfig, ProbeRequiredKeys) {
  EXPECT_THAT(probes.error_of(lines({"[[probe]]", "library = \"libfoo.so\"", "symbol = \"f\""})),
              HasSubstr("eacgm.toml:1:1: probe #1: missing required key \"name\""));
  EXPECT_THAT(probes.error_of(lines({"[[probe]]", "name = \"p\"", "symbol = \"f\""})),
              HasSubstr("eacgm.toml:1:1: probe \"p\": missing required key \"library\""));
  EXPECT_THAT(probes.error_of(lines({"[[probe]]", "name = \"p\"", "library = \"libfoo.so\""})),
              HasSubstr("eacgm.toml:1:1: probe \"p\": missing \"symbol\""));
  EXPECT_THAT(probes.error_of(probe_with_args("pattern = \"foo*\"")),
              HasSubstr("eacgm.toml:5:11: probe \"p\": give either symbol"));
}

TEST(ProbeConfig, ProbeFieldRulesPointAtTheKey) {
  EXPECT_THAT(probes.error_of(lines({"[[probe]]", "name = \"9p\"", "library = \"l\"", "symbol = \"f\""})),
              HasSubstr("eacgm.toml:2:8: probe \"9p\": name \"9p\" is not valid"));
  EXPECT_THAT(probes.error_of(probe_with_args("domain = \"\"")),
              HasSubstr("eacgm.toml:5:10: probe \"p\": domain is empty"));
  EXPECT_THAT(
      probes.error_of(lines({"[[probe]]", "name = \"p\"", "library = \"/lib/libfoo.so\"", "symbol = \"f\""})),
      HasSubstr("eacgm.toml:3:11: probe \"p\": library \"/lib/libfoo.so\" contains a "
                "directory"));
  EXPECT_THAT(probes.error_of(lines({"[[probe]]", "name = \"p\"", "library = \"l\"", "symbol = \"foo*\""})),
              HasSubstr("eacgm.toml:4:10: probe \"p\": symbol \"foo*\" contains glob "
                        "characters; use pattern"));
}

TEST(ProbeConfig, DuplicateProbeNames) {
  std::string e = probes.error_of(lines({"[[probe]]", "name = \"p\"", "library = \"l\"", "symbol = \"f\"",
                                         "[[probe]]", "name = \"p\"", "library = \"l\"", "symbol = \"g\""}));
  EXPECT_THAT(e, HasSubstr("eacgm.toml:6:8: probe \"p\": duplicate probe name (first defined at "
                           "line 2)"));
}

TEST(ProbeConfig, RetRules) {
  Result<Probes> r = probes.parse(probe_with_args("exit = false"), "x");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->specs[0].ret, ReturnKind::kNone);
  r = probes.parse(probe_with_args("ret = \"int64\""), "x");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->specs[0].ret, ReturnKind::kInt64);

  EXPECT_THAT(probes.error_of(probe_with_args("exit = false", "ret = \"int32\"")),
              HasSubstr("eacgm.toml:6:7: probe \"p\": ret = \"int32\" needs exit = true"));
  EXPECT_THAT(probes.error_of(probe_with_args("ret = \"int\"")),
              HasSubstr("eacgm.toml:5:7: probe \"p\": unknown ret \"int\" (expected one of "
                        "none, int32, int64, pointer)"));
  EXPECT_TRUE(probes.parse(probe_with_args("exit = false", "ret = \"none\""), "x").ok());
}

// A user's function returns data unless `errors` says which results are failures.
TEST(ProbeConfig, ErrorsSayWhichResultsAreFailures) {
  Result<Probes> r = probes.parse(probe_with_args(""), "x");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(error_rule(r->specs[0]), ErrorRule::kNone) << "an int32 result is not an error code by default";
  const std::pair<const char*, ErrorRule> rules[] = {{"nonzero", ErrorRule::kNonZero},
                                                     {"negative", ErrorRule::kNegative},
                                                     {"minus_one", ErrorRule::kMinusOne}};
  for (const auto& [name, rule] : rules) {
    const std::string line = std::string("errors = \"") + name + "\"";
    r = probes.parse(probe_with_args(line.c_str()), "x");
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(error_rule(r->specs[0]), rule) << name;
  }
  r = probes.parse(probe_with_args("ret = \"pointer\"", "errors = \"null\""), "x");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(error_rule(r->specs[0]), ErrorRule::kNull);

  EXPECT_THAT(
      probes.error_of(probe_with_args("errors = \"nonzer\"")),
      HasSubstr("eacgm.toml:5:10: probe \"p\": unknown errors \"nonzer\" (did you mean \"nonzero\"?"));
  EXPECT_THAT(probes.error_of(probe_with_args("errors = \"null\"")),
              HasSubstr("probe \"p\": errors = \"null\" is for functions that return a pointer"));
  EXPECT_THAT(probes.error_of(probe_with_args("ret = \"pointer\"", "errors = \"negative\"")),
              HasSubstr("errors = \"negative\" reads a number, not a pointer"));
  EXPECT_THAT(probes.error_of(probe_with_args("exit = false", "errors = \"nonzero\"")),
              HasSubstr("errors = \"nonzero\" reads the return value: it needs ret"));
}

TEST(ProbeConfig, ArgKindAndFormat) {
  std::string e = probes.error_of(probe_with_args("args = [{ name = \"size\", reg = 1, kind = \"u16\" }]"));
  EXPECT_EQ(e,
            "eacgm.toml:5:42: probe \"p\": arg \"size\": unknown kind \"u16\" (expected one "
            "of raw, u32, deref_u32, deref_u64, dim3, deref_dim3, string, dim3_split)");
  e = probes.error_of(probe_with_args("args = [{ name = \"size\", reg = 1, kind = \"deref_u46\" }]"));
  EXPECT_THAT(e, HasSubstr("eacgm.toml:5:42: probe \"p\": arg \"size\": unknown kind "
                           "\"deref_u46\" (did you mean \"deref_u64\"?"));
  e = probes.error_of(probe_with_args("args = [{ name = \"size\", reg = 1, format = \"decimal\" }]"));
  EXPECT_THAT(e, HasSubstr("eacgm.toml:5:44: probe \"p\": arg \"size\": unknown format "
                           "\"decimal\" (expected one of unsigned, signed, hex)"));
  e = probes.error_of(probe_with_args("args = [{ name = \"size\", reg = 1, at_exit = \"yes\" }]"));
  EXPECT_THAT(e, HasSubstr("eacgm.toml:5:45: probe \"p\": arg \"size\": at_exit must be true "
                           "or false"));
}

TEST(ProbeConfig, ArgSourceRules) {
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"n\" }]")),
              HasSubstr("eacgm.toml:5:9: probe \"p\": arg \"n\": missing \"reg\""));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"n\", reg = 1, stack = 2 }]")),
              HasSubstr("eacgm.toml:5:40: probe \"p\": arg \"n\": give either reg"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"n\", reg = 6 }]")),
              HasSubstr("eacgm.toml:5:29: probe \"p\": arg \"n\": reg 6 is out of range 0..5"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"n\", reg = -1 }]")),
              HasSubstr("eacgm.toml:5:29: probe \"p\": arg \"n\": reg = -1 is out of range "
                        "0..5"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"n\", reg = \"rdi\" }]")),
              HasSubstr("eacgm.toml:5:29: probe \"p\": arg \"n\": reg must be an integer"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"n\", stack = 32 }]")),
              HasSubstr("eacgm.toml:5:31: probe \"p\": arg \"n\": stack slot 32 is out of range "
                        "0..31"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"n\", stack = 1000 }]")),
              HasSubstr("eacgm.toml:5:31: probe \"p\": arg \"n\": stack = 1000 is out of range "
                        "0..31"));
}

// Pointer chains: `from` names an earlier arg whose captured value this one reads through.
TEST(ProbeConfig, PointerChainsFromEarlierArgs) {
  auto config = probes.parse(
      probe_with_args("args = [{ name = \"inner\", reg = 0, kind = \"deref_u64\", offset = 8 },\n"
                      "  { name = \"name_ptr\", from = \"inner\", kind = \"deref_u64\", offset = 8 },\n"
                      "  { name = \"name\", from = \"name_ptr\", kind = \"string\" },\n"
                      "  { name = \"count\", from = \"inner\", kind = \"deref_u32\", offset = 16 }]"),
      "eacgm.toml");
  ASSERT_TRUE(config.ok()) << config.error();
  const auto& args = config->specs.at(0).args;
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[1].source, ArgSource::kArg);
  EXPECT_EQ(args[1].index, 0);
  EXPECT_EQ(args[1].offset, 8);
  EXPECT_EQ(args[2].source, ArgSource::kArg);
  EXPECT_EQ(args[2].index, 1);
  EXPECT_EQ(args[2].kind, ArgKind::kString);
  EXPECT_EQ(args[3].index, 0);
  EXPECT_EQ(args[3].kind, ArgKind::kDerefU32);

  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"n\", from = \"n\" }]")),
              HasSubstr("probe \"p\": arg \"n\": from = \"n\" names no earlier arg of this "
                        "probe (none before this one)"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"a\", reg = 0 }, { name = \"n\", from "
                                              "= \"b\" }]")),
              HasSubstr("arg \"n\": from = \"b\" names no earlier arg of this probe (a)"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"a\", reg = 0 }, { name = \"n\", from "
                                              "= \"a\", reg = 1 }]")),
              HasSubstr("arg \"n\": give either from (an earlier arg's value) or reg, not both"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"a\", reg = 0, kind = \"deref_u64\", "
                                              "at_exit = true }, { name = \"n\", from = \"a\", kind = "
                                              "\"deref_u32\" }]")),
              HasSubstr("arg \"n\": a pointer chain is read at entry"));
}

TEST(ProbeConfig, Dim3Rules) {
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"g\", reg = 5, kind = \"dim3\" }]")),
              HasSubstr("eacgm.toml:5:29: probe \"p\": arg \"g\": a dim3 passed by value in "
                        "reg 5 needs the next register"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"g\", stack = 31, kind = \"dim3\" }]")),
              HasSubstr("eacgm.toml:5:31: probe \"p\": arg \"g\": a dim3 passed by value takes "
                        "two stack slots"));
  EXPECT_TRUE(
      probes.parse(probe_with_args("args = [{ name = \"g\", stack = 30, kind = \"dim3\" }]"), "x").ok());
}

TEST(ProbeConfig, AtExitRules) {
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"n\", reg = 0, at_exit = true }]")),
              HasSubstr("eacgm.toml:5:42: probe \"p\": arg \"n\": at_exit = true only applies to kinds "
                        "that read memory"));
  EXPECT_THAT(
      probes.error_of(probe_with_args(
          "args = [{ name = \"n\", reg = 0, kind = \"deref_u32\", at_exit = true }]", "exit = false")),
      HasSubstr("eacgm.toml:5:62: probe \"p\": arg \"n\": at_exit = true needs exit = true"));
}

TEST(ProbeConfig, ArgCountNamesAndStrings) {
  std::string nine = "args = [";
  for (int i = 0; i < 9; ++i) nine += "{ name = \"a" + std::to_string(i) + "\", reg = 0 },";
  nine += "]";
  EXPECT_THAT(probes.error_of(probe_with_args(nine.c_str())),
              HasSubstr("eacgm.toml:5:8: probe \"p\": 9 args given; at most 8"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"Size\", reg = 0 }]")),
              HasSubstr("eacgm.toml:5:18: probe \"p\": arg \"Size\": name \"Size\" is not valid"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ reg = 0 }]")),
              HasSubstr("eacgm.toml:5:9: probe \"p\": arg #1: missing required key \"name\""));
  EXPECT_THAT(
      probes.error_of(probe_with_args("args = [{ name = \"a\", reg = 0 }, { name = \"a\", reg = 1 }]")),
      HasSubstr("eacgm.toml:5:43: probe \"p\": arg \"a\": duplicate arg name \"a\" "
                "(also arg #1)"));
  EXPECT_THAT(probes.error_of(probe_with_args("args = [{ name = \"a\", reg = 0, kind = \"string\" }, "
                                              "{ name = \"b\", reg = 1, kind = \"string\" }, "
                                              "{ name = \"c\", reg = 2, kind = \"string\" }]")),
              HasSubstr("eacgm.toml:5:123: probe \"p\": arg \"c\": a third string arg"));
}

TEST(ProbeConfig, DocumentedPointerChainParses) {
  std::ifstream in(std::string(EACGM_SOURCE_DIR) + "/docs/config.md");
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string fence = "```toml\n";
  auto begin = doc.find(fence, doc.find("Pointer chains:"));
  ASSERT_NE(begin, std::string::npos);
  begin += fence.size();
  auto end = doc.find("```", begin);
  Result<Probes> r = probes.parse(doc.substr(begin, end - begin), "docs/config.md");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->specs.size(), 1u);
  const auto& args = r->specs[0].args;
  ASSERT_EQ(args.size(), 4u);
  EXPECT_EQ(args[2].source, ArgSource::kArg);
  EXPECT_EQ(args[2].index, 1);
}

}  // namespace
}  // namespace eacgm::probe
