// USDT operand parsing: the GNU assembler operand syntax that <sys/sdt.h> writes into
// .note.stapsdt ("size@operand"), restricted to what a uprobe can read.
#include "probe/usdt_args.h"

#include <fmt/format.h>

#include <array>
#include <charconv>

namespace eacgm::probe {
namespace {

struct RegisterName {
  std::string_view names[4];  // 64-, 32-, 16- and 8-bit spellings
  std::uint8_t slot;          // enum eacgm_reg
};

// Slots as in bpf/events.h enum eacgm_reg.
constexpr std::array<RegisterName, 16> kRegisters = {{
    {{"rdi", "edi", "di", "dil"}, 0},
    {{"rsi", "esi", "si", "sil"}, 1},
    {{"rdx", "edx", "dx", "dl"}, 2},
    {{"rcx", "ecx", "cx", "cl"}, 3},
    {{"r8", "r8d", "r8w", "r8b"}, 4},
    {{"r9", "r9d", "r9w", "r9b"}, 5},
    {{"rax", "eax", "ax", "al"}, 6},
    {{"rbx", "ebx", "bx", "bl"}, 7},
    {{"rbp", "ebp", "bp", "bpl"}, 8},
    {{"rsp", "esp", "sp", "spl"}, 9},
    {{"r10", "r10d", "r10w", "r10b"}, 10},
    {{"r11", "r11d", "r11w", "r11b"}, 11},
    {{"r12", "r12d", "r12w", "r12b"}, 12},
    {{"r13", "r13d", "r13w", "r13b"}, 13},
    {{"r14", "r14d", "r14w", "r14b"}, 14},
    {{"r15", "r15d", "r15w", "r15b"}, 15},
}};

bool parse_int(std::string_view text, std::int64_t& out) {
  if (text.empty()) return false;
  bool negative = false;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc() || end != text.data() + text.size()) return false;
  out = negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
  return true;
}

Result<std::uint8_t> parse_register(std::string_view operand, std::string_view reg) {
  if (reg.empty() || reg[0] != '%') {
    return make_error(fmt::format("USDT operand \"{}\": expected a register such as %rax", operand));
  }
  reg.remove_prefix(1);
  int slot = usdt_register_slot(reg);
  if (slot >= 0) return static_cast<std::uint8_t>(slot);
  if (reg == "ah" || reg == "bh" || reg == "ch" || reg == "dh") {
    return make_error(
        fmt::format("USDT operand \"{}\": high-byte register %{} is not supported", operand, reg));
  }
  if (reg == "rip") {
    return make_error(
        fmt::format("USDT operand \"{}\": %rip-relative operands (globals) are not supported", operand));
  }
  return make_error(fmt::format("USDT operand \"{}\": unknown register %{}", operand, reg));
}

}  // namespace

int usdt_register_slot(std::string_view name) {
  for (const auto& r : kRegisters) {
    for (std::string_view n : r.names) {
      if (n == name) return r.slot;
    }
  }
  return -1;
}

Result<UsdtOperand> parse_usdt_operand(std::string_view text) {
  UsdtOperand op;
  std::string_view rest = text;
  // "size@operand"; very old notes omit the size, which then means 8 unsigned bytes.
  if (auto at = rest.find('@'); at != std::string_view::npos) {
    std::int64_t size = 0;
    if (!parse_int(rest.substr(0, at), size) || !(size == 1 || size == 2 || size == 4 || size == 8 ||
                                                  size == -1 || size == -2 || size == -4 || size == -8)) {
      return make_error(
          fmt::format("USDT operand \"{}\": size must be one of 1, 2, 4, 8 "
                      "(negative when signed)",
                      text));
    }
    op.is_signed = size < 0;
    op.size = static_cast<std::uint8_t>(size < 0 ? -size : size);
    rest.remove_prefix(at + 1);
  }
  if (rest.empty()) return make_error(fmt::format("USDT operand \"{}\" is empty", text));
  if (rest[0] == '$') {
    op.where = UsdtOperand::Where::kConstant;
    if (!parse_int(rest.substr(1), op.constant)) {
      return make_error(fmt::format("USDT operand \"{}\": constant is not an integer", text));
    }
    return op;
  }
  if (rest[0] == '%') {
    auto reg = parse_register(text, rest);
    if (!reg) return std::move(reg).take_error();
    op.where = UsdtOperand::Where::kRegister;
    op.reg = *reg;
    return op;
  }
  // "disp(%reg)" with an optional decimal/hex displacement.
  const auto open = rest.find('(');
  if (open == std::string_view::npos || rest.back() != ')') {
    return make_error(fmt::format("USDT operand \"{}\": expected %reg, disp(%reg) or $imm", text));
  }
  std::string_view inside = rest.substr(open + 1, rest.size() - open - 2);
  if (inside.find(',') != std::string_view::npos) {
    return make_error(
        fmt::format("USDT operand \"{}\": indexed addressing (base, index, scale) is not supported", text));
  }
  std::string_view disp = rest.substr(0, open);
  if (!disp.empty() && !parse_int(disp, op.displacement)) {
    if (inside == "%rip") {
      return make_error(
          fmt::format("USDT operand \"{}\": %rip-relative operands (globals) are not supported", text));
    }
    return make_error(fmt::format("USDT operand \"{}\": displacement \"{}\" is not an integer", text, disp));
  }
  auto reg = parse_register(text, inside);
  if (!reg) return std::move(reg).take_error();
  op.where = UsdtOperand::Where::kMemory;
  op.reg = *reg;
  return op;
}

Result<std::vector<UsdtOperand>> parse_usdt_operands(std::string_view text) {
  std::vector<UsdtOperand> out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ' || text[i] == '\t') {
      ++i;
      continue;
    }
    std::size_t end = text.find_first_of(" \t", i);
    if (end == std::string_view::npos) end = text.size();
    auto op = parse_usdt_operand(text.substr(i, end - i));
    if (!op) return std::move(op).take_error();
    out.push_back(*op);
    i = end;
  }
  return out;
}

Result<ArgSpec> resolve_usdt_arg(const ArgSpec& arg, const std::vector<UsdtOperand>& operands) {
  if (arg.source != ArgSource::kUsdtArg) return arg;
  if (arg.index >= operands.size()) {
    return make_error(fmt::format("arg \"{}\": the probe has {} operand(s), not operand #{}", arg.name,
                                  operands.size(), arg.index + 1));
  }
  const UsdtOperand& op = operands[arg.index];
  ArgSpec out = arg;
  switch (op.where) {
    case UsdtOperand::Where::kConstant:
      return make_error(
          fmt::format("arg \"{}\": operand #{} is a constant (${}), which eacgm "
                      "does not capture",
                      arg.name, arg.index + 1, op.constant));
    case UsdtOperand::Where::kRegister:
      out.source = ArgSource::kPtReg;
      out.displacement = 0;
      break;
    case UsdtOperand::Where::kMemory:
      if (op.displacement < INT16_MIN || op.displacement > INT16_MAX) {
        return make_error(
            fmt::format("arg \"{}\": operand #{} displacement {} does not fit 16 "
                        "bits",
                        arg.name, arg.index + 1, op.displacement));
      }
      out.source = ArgSource::kPtRegMem;
      out.displacement = static_cast<std::int32_t>(op.displacement);
      break;
  }
  out.index = op.reg;
  const bool reads_memory = arg.kind == ArgKind::kString || arg.kind == ArgKind::kDerefU32 ||
                            arg.kind == ArgKind::kDerefU64 || arg.kind == ArgKind::kDerefDim3;
  if (reads_memory) {
    if (op.size != 8) {
      return make_error(
          fmt::format("arg \"{}\": kind {} needs a pointer, but operand #{} is {} "
                      "bytes",
                      arg.name, arg.kind == ArgKind::kString ? "string" : "deref", arg.index + 1, op.size));
    }
    return out;
  }
  switch (op.size) {
    case 1:
      out.kind = ArgKind::kU8;
      break;
    case 2:
      out.kind = ArgKind::kU16;
      break;
    case 4:
      out.kind = ArgKind::kU32;
      break;
    default:
      out.kind = ArgKind::kRaw;
      break;
  }
  if (arg.format != ArgFormat::kHex) {
    out.format = op.is_signed ? ArgFormat::kSigned : ArgFormat::kUnsigned;
  }
  return out;
}

}  // namespace eacgm::probe
