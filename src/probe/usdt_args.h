// USDT (SystemTap SDT) operand strings on x86-64 ("8@%rbx", "-4@-20(%rbp)") parsed into
// register/memory locations, and turned into the BPF capture of a probe-spec argument.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/probe_spec.h"
#include "core/result.h"

namespace eacgm::probe {

struct UsdtOperand {
  enum class Where : std::uint8_t {
    kRegister,  // the register's value ("8@%rax", "-4@%edx")
    kMemory,    // at register + displacement ("8@-24(%rbp)", "-4@112(%rsp)", "8@(%rax)")
    kConstant,  // an immediate ("4@$5")
  };
  Where where = Where::kRegister;
  std::uint8_t size = 8;          // bytes: 1, 2, 4 or 8
  bool is_signed = false;         // a negative size in the note
  std::uint8_t reg = 0;           // bpf/events.h eacgm_reg slot (kRegister, kMemory)
  std::int64_t displacement = 0;  // kMemory
  std::int64_t constant = 0;      // kConstant
};

// One operand. Errors name the operand and what is unsupported (a register pair such
// as "(%rax,%rbx,8)", %rip-relative symbols, high-byte registers).
Result<UsdtOperand> parse_usdt_operand(std::string_view text);
// A note's whole argument string: operands separated by spaces; "" is no operands.
Result<std::vector<UsdtOperand>> parse_usdt_operands(std::string_view text);

// The eacgm_reg slot of a register name without '%' ("rax", "r12d", "sil"), or -1.
int usdt_register_slot(std::string_view name);

// Replaces a kUsdtArg argument with the BPF location of its operand. Numeric kinds
// take the operand's width (u8/u16/u32/raw) and, unless hex, its signedness; string
// and deref kinds read through the operand's value as a pointer.
Result<ArgSpec> resolve_usdt_arg(const ArgSpec& arg, const std::vector<UsdtOperand>& operands);

}  // namespace eacgm::probe
