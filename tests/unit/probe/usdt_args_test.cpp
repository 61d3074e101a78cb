// USDT operand parsing and resolution into BPF register/memory captures: every operand
// form of /usr/bin/python3.11's notes, the other assembler forms, and the refusals.
#include "probe/usdt_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bpf/events.h"
#include "probe/usdt_notes.h"

namespace eacgm::probe {
namespace {

using ::testing::HasSubstr;
using Where = UsdtOperand::Where;

UsdtOperand parse(std::string_view text) {
  auto r = parse_usdt_operand(text);
  EXPECT_TRUE(r.ok()) << text << ": " << (r.ok() ? "" : r.error());
  return r.ok() ? *r : UsdtOperand{};
}

std::string error_of(std::string_view text) {
  auto r = parse_usdt_operand(text);
  return r.ok() ? std::string("<accepted>") : r.error();
}

TEST(UsdtArgs, RegisterSlotsFollowEventsHeader) {
  EXPECT_EQ(usdt_register_slot("rdi"), EACGM_REG_RDI);
  EXPECT_EQ(usdt_register_slot("r9"), EACGM_REG_R9);
  EXPECT_EQ(usdt_register_slot("rax"), EACGM_REG_RAX);
  EXPECT_EQ(usdt_register_slot("eax"), EACGM_REG_RAX);
  EXPECT_EQ(usdt_register_slot("ax"), EACGM_REG_RAX);
  EXPECT_EQ(usdt_register_slot("al"), EACGM_REG_RAX);
  EXPECT_EQ(usdt_register_slot("rbx"), EACGM_REG_RBX);
  EXPECT_EQ(usdt_register_slot("ebp"), EACGM_REG_RBP);
  EXPECT_EQ(usdt_register_slot("rsp"), EACGM_REG_RSP);
  EXPECT_EQ(usdt_register_slot("r12"), EACGM_REG_R12);
  EXPECT_EQ(usdt_register_slot("r12d"), EACGM_REG_R12);
  EXPECT_EQ(usdt_register_slot("r15w"), EACGM_REG_R15);
  EXPECT_EQ(usdt_register_slot("sil"), EACGM_REG_RSI);
  EXPECT_EQ(usdt_register_slot("r10b"), EACGM_REG_R10);
  EXPECT_EQ(usdt_register_slot("rip"), -1);
  EXPECT_EQ(usdt_register_slot("xmm0"), -1);
}

// Every form in python3.11's notes: "8@%rbx 8@%r15", "-8@%r12", "-4@112(%rsp)",
// "8@%r14 8@%rax -4@%ebp", "8@%rax -4@%edx", "8@%rbp 8@%r12 -4@%eax".
TEST(UsdtArgs, Python311Forms) {
  UsdtOperand a = parse("8@%rbx");
  EXPECT_EQ(a.where, Where::kRegister);
  EXPECT_EQ(a.size, 8);
  EXPECT_FALSE(a.is_signed);
  EXPECT_EQ(a.reg, EACGM_REG_RBX);

  a = parse("-8@%r12");
  EXPECT_EQ(a.size, 8);
  EXPECT_TRUE(a.is_signed);
  EXPECT_EQ(a.reg, EACGM_REG_R12);

  a = parse("-4@112(%rsp)");
  EXPECT_EQ(a.where, Where::kMemory);
  EXPECT_EQ(a.size, 4);
  EXPECT_TRUE(a.is_signed);
  EXPECT_EQ(a.reg, EACGM_REG_RSP);
  EXPECT_EQ(a.displacement, 112);

  a = parse("-4@%ebp");
  EXPECT_EQ(a.where, Where::kRegister);
  EXPECT_EQ(a.reg, EACGM_REG_RBP);
  a = parse("-4@%edx");
  EXPECT_EQ(a.reg, EACGM_REG_RDX);
  a = parse("-4@%eax");
  EXPECT_EQ(a.reg, EACGM_REG_RAX);

  auto all = parse_usdt_operands("8@%rbp 8@%r12 -4@%eax");
  ASSERT_TRUE(all.ok()) << all.error();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].reg, EACGM_REG_RBP);
  EXPECT_EQ((*all)[1].reg, EACGM_REG_R12);
  EXPECT_EQ((*all)[2].size, 4);
  all = parse_usdt_operands("8@%r14 8@%rax -4@%ebp");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 3u);
  all = parse_usdt_operands("");
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
}

TEST(UsdtArgs, OtherAssemblerForms) {
  UsdtOperand a = parse("8@-24(%rbp)");
  EXPECT_EQ(a.where, Where::kMemory);
  EXPECT_EQ(a.displacement, -24);
  EXPECT_EQ(a.reg, EACGM_REG_RBP);
  a = parse("8@(%rax)");
  EXPECT_EQ(a.where, Where::kMemory);
  EXPECT_EQ(a.displacement, 0);
  a = parse("2@0x10(%r13)");
  EXPECT_EQ(a.size, 2);
  EXPECT_EQ(a.displacement, 16);
  EXPECT_EQ(a.reg, EACGM_REG_R13);
  a = parse("1@%sil");
  EXPECT_EQ(a.size, 1);
  EXPECT_EQ(a.reg, EACGM_REG_RSI);
  a = parse("%rdi");  // sizeless, as very old notes write it
  EXPECT_EQ(a.size, 8);
  EXPECT_EQ(a.reg, EACGM_REG_RDI);
  a = parse("-4@$-5");
  EXPECT_EQ(a.where, Where::kConstant);
  EXPECT_EQ(a.constant, -5);
}

TEST(UsdtArgs, UnsupportedFormsSayWhy) {
  EXPECT_THAT(error_of("8@(%rax,%rbx,8)"), HasSubstr("indexed addressing"));
  EXPECT_THAT(error_of("8@foo(%rip)"), HasSubstr("%rip-relative"));
  EXPECT_THAT(error_of("1@%ah"), HasSubstr("high-byte register %ah"));
  EXPECT_THAT(error_of("8@%xmm0"), HasSubstr("unknown register %xmm0"));
  EXPECT_THAT(error_of("3@%rax"), HasSubstr("size must be one of 1, 2, 4, 8"));
  EXPECT_THAT(error_of("8@"), HasSubstr("is empty"));
  EXPECT_THAT(error_of("8@12"), HasSubstr("expected %reg, disp(%reg) or $imm"));
}

ArgSpec usdt_arg(const char* name, std::uint8_t operand, ArgKind kind,
                 ArgFormat format = ArgFormat::kUnsigned) {
  ArgSpec a;
  a.name = name;
  a.source = ArgSource::kUsdtArg;
  a.index = operand;
  a.kind = kind;
  a.format = format;
  return a;
}

TEST(UsdtArgs, ResolvesToRegisterAndMemoryCaptures) {
  auto ops = parse_usdt_operands("8@%rbp 8@%r12 -4@%eax -4@112(%rsp) 2@%r8w 1@-3(%rbx)");
  ASSERT_TRUE(ops.ok());
  auto file = resolve_usdt_arg(usdt_arg("file", 0, ArgKind::kString), *ops);
  ASSERT_TRUE(file.ok()) << file.error();
  EXPECT_EQ(file->source, ArgSource::kPtReg);
  EXPECT_EQ(file->index, EACGM_REG_RBP);
  EXPECT_EQ(file->kind, ArgKind::kString);

  auto line = resolve_usdt_arg(usdt_arg("line", 2, ArgKind::kRaw), *ops);
  ASSERT_TRUE(line.ok());
  EXPECT_EQ(line->source, ArgSource::kPtReg);
  EXPECT_EQ(line->index, EACGM_REG_RAX);
  EXPECT_EQ(line->kind, ArgKind::kU32);
  EXPECT_EQ(line->format, ArgFormat::kSigned);

  auto gen = resolve_usdt_arg(usdt_arg("generation", 3, ArgKind::kU32), *ops);
  ASSERT_TRUE(gen.ok());
  EXPECT_EQ(gen->source, ArgSource::kPtRegMem);
  EXPECT_EQ(gen->index, EACGM_REG_RSP);
  EXPECT_EQ(gen->displacement, 112);
  EXPECT_EQ(gen->kind, ArgKind::kU32);

  auto half = resolve_usdt_arg(usdt_arg("h", 4, ArgKind::kRaw, ArgFormat::kHex), *ops);
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(half->kind, ArgKind::kU16);
  EXPECT_EQ(half->format, ArgFormat::kHex);  // hex stays hex
  auto byte = resolve_usdt_arg(usdt_arg("b", 5, ArgKind::kRaw), *ops);
  ASSERT_TRUE(byte.ok());
  EXPECT_EQ(byte->kind, ArgKind::kU8);
  EXPECT_EQ(byte->displacement, -3);
  EXPECT_EQ(byte->format, ArgFormat::kUnsigned);

  EXPECT_THAT(resolve_usdt_arg(usdt_arg("s", 2, ArgKind::kString), *ops).error(),
              HasSubstr("needs a pointer, but operand #3 is 4 bytes"));
  EXPECT_THAT(resolve_usdt_arg(usdt_arg("x", 6, ArgKind::kRaw), *ops).error(),
              HasSubstr("the probe has 6 operand(s), not operand #7"));
  auto constant = parse_usdt_operands("4@$3");
  ASSERT_TRUE(constant.ok());
  EXPECT_THAT(resolve_usdt_arg(usdt_arg("c", 0, ArgKind::kRaw), *constant).error(),
              HasSubstr("is a constant ($3)"));
}

// The notes of the machine's interpreter, when it has one, all parse.
TEST(UsdtArgs, EveryNoteOfSystemPythonParses) {
  auto notes = read_usdt_probes("/usr/bin/python3.11");
  if (!notes.ok() || notes->empty()) GTEST_SKIP() << "no /usr/bin/python3.11 with USDT notes";
  for (const auto& n : *notes) {
    auto ops = parse_usdt_operands(n.arguments);
    EXPECT_TRUE(ops.ok()) << n.name << ": " << n.arguments << ": " << (ops.ok() ? "" : ops.error());
  }
}

}  // namespace
}  // namespace eacgm::probe
