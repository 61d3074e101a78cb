// Probe-spec rules applied to specs built in code, the way built-in catalogs build them.
#include "core/spec_validate.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace eacgm {
namespace {

using ::testing::HasSubstr;

ProbeSpec valid_spec() {
  ProbeSpec spec;
  spec.name = "cudaMalloc";
  spec.domain = "cuda";
  spec.library = "libcudart.so*";
  spec.symbol = "cudaMalloc";
  spec.with_exit = true;
  spec.ret = ReturnKind::kInt32;
  spec.args = {
      ArgSpec{"dev_ptr", ArgSource::kRegister, 0, ArgKind::kDerefU64, ArgFormat::kHex, true},
      ArgSpec{"size", ArgSource::kRegister, 1, ArgKind::kRaw, ArgFormat::kUnsigned, false},
  };
  return spec;
}

ArgSpec arg(std::string name, ArgSource source, std::uint8_t index, ArgKind kind, bool at_exit = false) {
  return ArgSpec{std::move(name), source, index, kind, ArgFormat::kUnsigned, at_exit};
}

// The error of validate_spec, or a marker when the spec was unexpectedly accepted.
std::string error_of(const ProbeSpec& spec) {
  Status s = validate_spec(spec);
  return s.ok() ? std::string("<accepted>") : s.error();
}

TEST(SpecValidate, AcceptsValidSpec) { EXPECT_TRUE(validate_spec(valid_spec()).ok()); }

TEST(SpecValidate, AcceptsEntryOnlyPatternProbeWithoutArgs) {
  ProbeSpec spec = valid_spec();
  spec.name = "at::native::add.Tensor";
  spec.symbol = "_ZN2at6native*";
  spec.symbol_is_pattern = true;
  spec.with_exit = false;
  spec.ret = ReturnKind::kNone;
  spec.args.clear();
  EXPECT_TRUE(validate_spec(spec).ok()) << error_of(spec);
}

TEST(SpecValidate, AcceptsBoundaryIndices) {
  ProbeSpec spec = valid_spec();
  spec.args = {arg("grid", ArgSource::kRegister, 4, ArgKind::kDim3),
               arg("last_reg", ArgSource::kRegister, 5, ArgKind::kRaw),
               arg("last_slot", ArgSource::kStack, 31, ArgKind::kU32),
               arg("block", ArgSource::kStack, 29, ArgKind::kDim3)};
  EXPECT_TRUE(validate_spec(spec).ok()) << error_of(spec);
}

TEST(SpecValidate, EnumNames) {
  EXPECT_EQ(arg_kind_name(ArgKind::kDerefDim3), "deref_dim3");
  EXPECT_EQ(arg_format_name(ArgFormat::kSigned), "signed");
  EXPECT_EQ(return_kind_name(ReturnKind::kPointer), "pointer");
  EXPECT_EQ(arg_kind_name(static_cast<ArgKind>(99)), "?");
  EXPECT_TRUE(is_deref_kind(ArgKind::kString));
  EXPECT_FALSE(is_deref_kind(ArgKind::kDim3));
}

TEST(SpecValidate, ProbeNameRules) {
  ProbeSpec spec = valid_spec();
  spec.name = "";
  EXPECT_THAT(error_of(spec), HasSubstr("name is empty"));
  spec.name = "9lives";
  EXPECT_THAT(error_of(spec), HasSubstr("probe \"9lives\": name \"9lives\" is not valid"));
  spec.name = "has space";
  EXPECT_THAT(error_of(spec), HasSubstr("is not valid"));
}

TEST(SpecValidate, DomainLibrarySymbolRules) {
  ProbeSpec spec = valid_spec();
  spec.domain = "";
  EXPECT_THAT(error_of(spec), HasSubstr("domain is empty"));

  spec = valid_spec();
  spec.library = "";
  EXPECT_THAT(error_of(spec), HasSubstr("library is empty"));
  spec.library = "/usr/lib/libfoo.so.1";
  EXPECT_THAT(error_of(spec), HasSubstr("write \"libfoo.so.1\""));

  spec = valid_spec();
  spec.symbol = "";
  EXPECT_THAT(error_of(spec), HasSubstr("symbol is empty"));
  spec.symbol = "cuda*";
  EXPECT_THAT(error_of(spec), HasSubstr("use pattern = \"cuda*\""));
  spec.symbol_is_pattern = true;
  EXPECT_TRUE(validate_spec(spec).ok());
}

TEST(SpecValidate, ReturnValueNeedsExit) {
  ProbeSpec spec = valid_spec();
  spec.args.clear();
  spec.with_exit = false;
  spec.ret = ReturnKind::kInt64;
  EXPECT_THAT(error_of(spec), HasSubstr("probe \"cudaMalloc\": ret = \"int64\" needs exit = true"));
}

TEST(SpecValidate, AtMostEightArgs) {
  ProbeSpec spec = valid_spec();
  spec.args.clear();
  for (int i = 0; i < 9; ++i) {
    spec.args.push_back(
        arg("a" + std::to_string(i), ArgSource::kStack, static_cast<std::uint8_t>(i), ArgKind::kRaw));
  }
  EXPECT_THAT(error_of(spec), HasSubstr("9 args given; at most 8"));
  spec.args.pop_back();
  EXPECT_TRUE(validate_spec(spec).ok());
}

TEST(SpecValidate, ArgNameRules) {
  ProbeSpec spec = valid_spec();
  spec.args[1].name = "devPtr";
  EXPECT_THAT(error_of(spec), HasSubstr("arg \"devPtr\": name \"devPtr\" is not valid"));
  spec.args[1].name = "";
  EXPECT_THAT(error_of(spec), HasSubstr("arg #2: name is empty"));
  spec.args[1].name = "dev_ptr";
  EXPECT_THAT(error_of(spec), HasSubstr("duplicate arg name \"dev_ptr\" (also arg #1)"));
}

TEST(SpecValidate, RegisterAndStackRanges) {
  ProbeSpec spec = valid_spec();
  spec.args[1].index = 6;
  EXPECT_THAT(error_of(spec), HasSubstr("arg \"size\": reg 6 is out of range 0..5"));
  spec.args[1] = arg("size", ArgSource::kStack, 32, ArgKind::kRaw);
  EXPECT_THAT(error_of(spec), HasSubstr("stack slot 32 is out of range 0..31"));
}

TEST(SpecValidate, Dim3ByValueNeedsTwoSlots) {
  ProbeSpec spec = valid_spec();
  spec.args[1] = arg("grid", ArgSource::kRegister, 5, ArgKind::kDim3);
  EXPECT_THAT(error_of(spec), HasSubstr("dim3 passed by value in reg 5 needs the next register"));
  spec.args[1] = arg("grid", ArgSource::kStack, 31, ArgKind::kDim3);
  EXPECT_THAT(error_of(spec), HasSubstr("takes two stack slots; slot 31"));
  // A dereferenced dim3 is one pointer: any register works.
  spec.args[1] = arg("grid", ArgSource::kRegister, 5, ArgKind::kDerefDim3);
  EXPECT_TRUE(validate_spec(spec).ok());
}

TEST(SpecValidate, AtExitRules) {
  ProbeSpec spec = valid_spec();
  spec.args[1].at_exit = true;  // kind raw
  EXPECT_THAT(error_of(spec), HasSubstr("arg \"size\": at_exit = true only applies to kinds "
                                        "that read memory"));
  spec = valid_spec();
  spec.with_exit = false;
  spec.ret = ReturnKind::kNone;
  EXPECT_THAT(error_of(spec), HasSubstr("arg \"dev_ptr\": at_exit = true needs exit = true"));
  for (ArgKind k : {ArgKind::kDerefU32, ArgKind::kDerefU64, ArgKind::kDerefDim3, ArgKind::kString}) {
    spec = valid_spec();
    spec.args[0].kind = k;
    EXPECT_TRUE(validate_spec(spec).ok()) << arg_kind_name(k);
  }
}

TEST(SpecValidate, AtMostTwoStrings) {
  ProbeSpec spec = valid_spec();
  spec.args = {arg("path", ArgSource::kRegister, 0, ArgKind::kString),
               arg("mode", ArgSource::kRegister, 1, ArgKind::kString)};
  EXPECT_TRUE(validate_spec(spec).ok());
  spec.args.push_back(arg("extra", ArgSource::kRegister, 2, ArgKind::kString));
  EXPECT_THAT(error_of(spec), HasSubstr("arg \"extra\": a third string arg; at most 2"));
}

TEST(SpecValidate, UsdtProbes) {
  ProbeSpec spec = valid_spec();
  spec.symbol.clear();
  spec.usdt = "python:function__entry";
  spec.with_exit = false;
  spec.ret = ReturnKind::kNone;
  spec.args = {arg("file", ArgSource::kUsdtArg, 0, ArgKind::kString)};
  EXPECT_TRUE(validate_spec(spec).ok());
  spec.with_exit = true;
  EXPECT_THAT(error_of(spec), HasSubstr("a USDT probe is entry-only"));
  spec.with_exit = false;
  spec.usdt = "function__entry";
  EXPECT_THAT(error_of(spec), HasSubstr("must be \"provider:name\""));
  spec.usdt.clear();
  spec.symbol = "f";
  EXPECT_THAT(error_of(spec), HasSubstr("a USDT operand needs a probe with usdt set"));
}

TEST(SpecValidate, RegisterSlots) {
  ProbeSpec spec = valid_spec();
  spec.args = {arg("v", ArgSource::kPtRegMem, 15, ArgKind::kU32)};
  spec.args[0].displacement = -20;
  EXPECT_TRUE(validate_spec(spec).ok());
  spec.args[0].index = 16;
  EXPECT_THAT(error_of(spec), HasSubstr("register slot 16 is out of range 0..15"));
  spec.args[0].index = 8;
  spec.args[0].displacement = 40000;
  EXPECT_THAT(error_of(spec), HasSubstr("displacement 40000 does not fit 16 bits"));
}

// Pointer chains: an arg read through what an earlier arg captured.
TEST(SpecValidate, PointerChains) {
  ProbeSpec spec = valid_spec();
  spec.args = {arg("obj", ArgSource::kRegister, 1, ArgKind::kDerefU64),
               arg("name_ptr", ArgSource::kArg, 0, ArgKind::kDerefU64),
               arg("name", ArgSource::kArg, 1, ArgKind::kString),
               arg("count", ArgSource::kArg, 0, ArgKind::kDerefU32)};
  spec.args[2].offset = 40;
  EXPECT_TRUE(validate_spec(spec).ok()) << error_of(spec);
  spec.args[1].index = 1;  // itself
  EXPECT_THAT(error_of(spec), HasSubstr("arg \"name_ptr\": arg #2 can only start from an "
                                        "earlier arg (#1..#1)"));
  spec.args[1].index = 3;  // a later one
  EXPECT_THAT(error_of(spec), HasSubstr("can only start from an earlier arg"));
  spec.args[1].index = 0;
  spec.args[0].at_exit = true;
  EXPECT_THAT(error_of(spec), HasSubstr("arg \"name_ptr\": a pointer chain is read at entry"));
  spec.args[0].at_exit = false;
  spec.args[3].at_exit = true;
  EXPECT_THAT(error_of(spec), HasSubstr("arg \"count\": a pointer chain is read at entry"));
  spec.args[3].at_exit = false;
  spec.args[0].kind = ArgKind::kDerefDim3;
  EXPECT_THAT(error_of(spec), HasSubstr("a pointer chain goes through one word"));
}

TEST(SpecValidate, SplitReturns) {
  ProbeSpec spec = valid_spec();
  spec.args[0].at_exit = false;
  spec.split_return = true;
  spec.ret = ReturnKind::kPointer;
  EXPECT_TRUE(validate_spec(spec).ok()) << error_of(spec);
  spec.args[0].at_exit = true;
  EXPECT_THAT(error_of(spec), HasSubstr("a split return carries no args"));
  spec.args[0].at_exit = false;
  spec.outer = true;
  EXPECT_THAT(error_of(spec), HasSubstr("a split return needs exit = true and outer = false"));
  spec.outer = false;
  spec.with_exit = false;
  spec.ret = ReturnKind::kNone;
  EXPECT_THAT(error_of(spec), HasSubstr("a split return needs exit = true"));
}

TEST(SpecValidate, AWaitingProbeNeedsItsReturn) {
  ProbeSpec spec = valid_spec();
  spec.waits = true;
  EXPECT_TRUE(validate_spec(spec).ok()) << error_of(spec);
  spec.with_exit = false;
  spec.ret = ReturnKind::kNone;
  for (auto& a : spec.args) a.at_exit = false;
  EXPECT_THAT(error_of(spec), HasSubstr("waits = true needs exit = true"));
  spec.with_exit = true;
  spec.split_return = true;
  EXPECT_THAT(error_of(spec), HasSubstr("waits = true needs exit = true"));
}

TEST(SpecValidate, DerivedValuesNameCapturedArgs) {
  ProbeSpec spec = valid_spec();
  spec.derived = {DerivedArg{"bytes", DerivedArg::Op::kCopy, "size", ""}};
  EXPECT_TRUE(validate_spec(spec).ok()) << error_of(spec);
  spec.derived = {DerivedArg{"bytes", DerivedArg::Op::kTimesNcclDtype, "size", "dev_ptr"}};
  EXPECT_TRUE(validate_spec(spec).ok()) << error_of(spec);

  spec.derived = {DerivedArg{"Bytes", DerivedArg::Op::kCopy, "size", ""}};
  EXPECT_THAT(error_of(spec), HasSubstr("derived value \"Bytes\": name is not valid"));
  spec.derived = {DerivedArg{"size", DerivedArg::Op::kCopy, "size", ""}};
  EXPECT_THAT(error_of(spec), HasSubstr("derived value \"size\": name is already used"));
  spec.derived = {DerivedArg{"bytes", DerivedArg::Op::kCopy, "count", ""}};
  EXPECT_THAT(error_of(spec), HasSubstr("probe \"cudaMalloc\": derived value \"bytes\": from "
                                        "\"count\" is not a captured arg"));
  spec.derived = {DerivedArg{"bytes", DerivedArg::Op::kTimesNcclDtype, "size", "datatype"}};
  EXPECT_THAT(error_of(spec), HasSubstr("with \"datatype\" is not a captured arg"));
}

TEST(SpecValidate, ViolationLocatesKey) {
  ProbeSpec spec = valid_spec();
  spec.args[1].kind = ArgKind::kDim3;
  spec.args[1].index = 5;
  auto v = find_spec_violation(spec);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->arg, 1);
  EXPECT_EQ(v->key, "reg");

  spec = valid_spec();
  spec.with_exit = false;
  v = find_spec_violation(spec);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->arg, -1);
  EXPECT_EQ(v->key, "ret");
  EXPECT_FALSE(find_spec_violation(valid_spec()).has_value());
}

}  // namespace
}  // namespace eacgm

namespace eacgm {
namespace {

// Which results are failures: the catalogs' rule by return kind, or the spec's own.
TEST(ErrorRule, ResultsAreReadByTheRule) {
  ProbeSpec s;
  s.ret = ReturnKind::kInt32;
  EXPECT_EQ(error_rule(s), ErrorRule::kNonZero);
  EXPECT_TRUE(is_failure(s, 35));
  EXPECT_FALSE(is_failure(s, 0x100000000ll)) << "an int32's upper half is not its value";
  s.ret = ReturnKind::kPointer;
  EXPECT_EQ(error_rule(s), ErrorRule::kNull);
  EXPECT_TRUE(is_failure(s, 0));
  EXPECT_FALSE(is_failure(s, 0x7f0000001000));
  s.ret = ReturnKind::kInt64;
  EXPECT_EQ(error_rule(s), ErrorRule::kNone);
  EXPECT_FALSE(is_failure(s, -1));

  s.ret = ReturnKind::kInt32;
  s.errors = ErrorRule::kNone;  // a function that returns its parity
  EXPECT_FALSE(is_failure(s, 1));
  s.errors = ErrorRule::kNegative;
  EXPECT_TRUE(is_failure(s, 0xfffffffe)) << "-2 in the low half";
  EXPECT_FALSE(is_failure(s, 7));
  s.errors = ErrorRule::kMinusOne;
  EXPECT_TRUE(is_failure(s, 0xffffffff));
  EXPECT_FALSE(is_failure(s, 0xfffffffe));
}

}  // namespace
}  // namespace eacgm
