// Probe-spec rules: the limits of the BPF capture code (bpf/events.h) and the
// combinations that would silently capture garbage, turned into actionable messages.
#include "core/spec_validate.h"

#include <fmt/format.h>

#include <cstddef>
#include <string>

namespace eacgm {
namespace {

bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// [A-Za-z_][A-Za-z0-9_.:-]*: spec names and domains end up as metric label values
// and JSON strings, and `:` keeps C++ qualified names (torch ops) usable.
bool is_spec_identifier(std::string_view s) {
  if (s.empty() || !(is_lower(s[0]) || is_upper(s[0]) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(is_lower(c) || is_upper(c) || is_digit(c) || c == '_' || c == '.' || c == ':' || c == '-')) {
      return false;
    }
  }
  return true;
}

// [a-z_][a-z0-9_]*: arg names become JSON keys and column names.
bool is_arg_identifier(std::string_view s) {
  if (s.empty() || !(is_lower(s[0]) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(is_lower(c) || is_digit(c) || c == '_')) return false;
  }
  return true;
}

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

std::optional<SpecViolation> probe_violation(std::string key, std::string message) {
  return SpecViolation{-1, std::move(key), std::move(message)};
}

std::optional<SpecViolation> arg_violation(std::size_t arg, std::string key, std::string message) {
  return SpecViolation{static_cast<int>(arg), std::move(key), std::move(message)};
}

// A USDT probe is one static point in a file: entry-only (the provider defines a
// separate probe for returns) and named "provider:name" as in the ELF note.
std::optional<SpecViolation> check_usdt_fields(const ProbeSpec& spec) {
  const auto colon = spec.usdt.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == spec.usdt.size()) {
    return probe_violation("usdt",
                           fmt::format("usdt \"{}\" must be \"provider:name\" as listed by `readelf -n` "
                                       "(for example \"python:function__entry\")",
                                       spec.usdt));
  }
  if (!spec.symbol.empty()) {
    return probe_violation("usdt", "give either usdt or symbol/pattern, not both");
  }
  if (spec.with_exit) {
    return probe_violation("exit",
                           "a USDT probe is entry-only (providers define a separate probe for "
                           "returns); set exit = false");
  }
  return std::nullopt;
}

std::optional<SpecViolation> check_probe_fields(const ProbeSpec& spec) {
  if (spec.name.empty()) {
    return probe_violation("name", "name is empty; give the probe a unique name such as \"my_alloc\"");
  }
  if (!is_spec_identifier(spec.name)) {
    return probe_violation("name", fmt::format("name \"{}\" is not valid: use letters, digits and _ . : - "
                                               "starting with a letter or _ (for example \"my_alloc\")",
                                               spec.name));
  }
  if (spec.domain.empty()) {
    return probe_violation("domain", "domain is empty; use a short word such as \"user\"");
  }
  if (!is_spec_identifier(spec.domain)) {
    return probe_violation("domain",
                           fmt::format("domain \"{}\" is not valid: use letters, digits and _ . : - "
                                       "starting with a letter or _ (for example \"user\")",
                                       spec.domain));
  }
  if (spec.library.empty()) {
    return probe_violation("library",
                           "library is empty; give a glob on the library file name such as \"libfoo.so*\"");
  }
  if (auto slash = spec.library.rfind('/'); slash != std::string::npos) {
    // Libraries are matched by the file name found in /proc/PID/maps, so a path
    // could never match; say which part to keep.
    return probe_violation("library",
                           fmt::format("library \"{}\" contains a directory; it is matched against the "
                                       "file name only, so write \"{}\"",
                                       spec.library, spec.library.substr(slash + 1)));
  }
  if (!spec.usdt.empty()) {
    if (auto v = check_usdt_fields(spec)) return v;
  }
  const char* symbol_key = spec.symbol_is_pattern ? "pattern" : "symbol";
  if (spec.symbol.empty() && spec.usdt.empty()) {
    return probe_violation(symbol_key, fmt::format("{} is empty; name the function to trace", symbol_key));
  }
  if (!spec.symbol_is_pattern && has_glob_chars(spec.symbol)) {
    return probe_violation("symbol",
                           fmt::format("symbol \"{}\" contains glob characters; use pattern = \"{}\" to "
                                       "match several symbols",
                                       spec.symbol, spec.symbol));
  }
  if (return_kind_name(spec.ret) == "?") {
    return probe_violation("ret", fmt::format("unknown return kind {}", static_cast<int>(spec.ret)));
  }
  if (spec.errors && *spec.errors != ErrorRule::kNone) {
    const ErrorRule rule = *spec.errors;
    if (spec.ret == ReturnKind::kNone) {
      return probe_violation("errors",
                             fmt::format("errors = \"{}\" reads the return value: it needs ret = \"int32\", "
                                         "\"int64\" or \"pointer\" (and exit = true)",
                                         error_rule_name(rule)));
    }
    if ((rule == ErrorRule::kNull) != (spec.ret == ReturnKind::kPointer)) {
      return probe_violation(
          "errors",
          rule == ErrorRule::kNull
              ? "errors = \"null\" is for functions that return a pointer: set ret = \"pointer\""
              : fmt::format("errors = \"{}\" reads a number, not a pointer: use errors = \"null\" with ret "
                            "= \"pointer\"",
                            error_rule_name(rule)));
    }
  }
  if (!spec.with_exit && spec.ret != ReturnKind::kNone) {
    return probe_violation("ret",
                           fmt::format("ret = \"{}\" needs exit = true (an entry-only probe never sees the "
                                       "return value); set exit = true or ret = \"none\"",
                                       return_kind_name(spec.ret)));
  }
  if (spec.outer && !spec.with_exit) {
    // The in-kernel depth is closed by the exit probe; without one it would never drop.
    return probe_violation("outer", "outer = true needs exit = true (the exit closes the call)");
  }
  if (spec.waits && (!spec.with_exit || spec.split_return)) {
    // The call is listed in flight from its entry until its return clears it: without a
    // return paired in the kernel it would stay listed.
    return probe_violation("waits", "waits = true needs exit = true (the return ends the wait)");
  }
  if (spec.split_return && (!spec.with_exit || spec.outer)) {
    // The kernel pairs nothing for such a probe: no exit means no return record, and
    // there is no open call to keep an outer depth.
    return probe_violation("exit", "a split return needs exit = true and outer = false");
  }
  if (spec.args.size() > kMaxArgs) {
    return probe_violation("args", fmt::format("{} args given; at most {} can be captured per "
                                               "probe",
                                               spec.args.size(), kMaxArgs));
  }
  return std::nullopt;
}

// The arg's name: snake_case, and unique within the probe.
std::optional<SpecViolation> check_arg_name(const ProbeSpec& spec, std::size_t i) {
  const ArgSpec& arg = spec.args[i];
  if (!is_arg_identifier(arg.name)) {
    return arg_violation(i, "name",
                         arg.name.empty()
                             ? std::string("name is empty; give the arg a snake_case name such as \"size\"")
                             : fmt::format("name \"{}\" is not valid: use snake_case ([a-z_][a-z0-9_]*, for "
                                           "example \"dev_ptr\")",
                                           arg.name));
  }
  for (std::size_t j = 0; j < i; ++j) {
    if (spec.args[j].name == arg.name) {
      return arg_violation(i, "name",
                           fmt::format("duplicate arg name \"{}\" (also arg #{}); arg names "
                                       "must be unique within a probe",
                                       arg.name, j + 1));
    }
  }
  return std::nullopt;
}

// Where the arg is read from (register, stack slot, pt_regs slot, an earlier arg, a USDT
// operand), within the BPF side's limits and with a kind that source can hold.
std::optional<SpecViolation> check_arg_source(const ProbeSpec& spec, std::size_t i) {
  const ArgSpec& arg = spec.args[i];
  switch (arg.source) {
    case ArgSource::kRegister:
      if (arg.index > kMaxRegisterIndex) {
        return arg_violation(i, "reg",
                             fmt::format("reg {} is out of range 0..{} (rdi, rsi, rdx, rcx, r8, r9); use "
                                         "stack = N for arguments passed on the stack",
                                         arg.index, kMaxRegisterIndex));
      }
      // A by-value dim3 is 12 bytes: x,y in one register and z in the next.
      if (arg.kind == ArgKind::kDim3 && arg.index + 1 > kMaxRegisterIndex) {
        return arg_violation(
            i, "reg",
            fmt::format("a dim3 passed by value in reg {} needs the next register for z; use "
                        "reg 0..{}, or stack = N when it is passed on the stack",
                        arg.index, kMaxRegisterIndex - 1));
      }
      break;
    case ArgSource::kStack:
      if (arg.index > kMaxStackSlot) {
        return arg_violation(i, "stack",
                             fmt::format("stack slot {} is out of range 0..{}", arg.index, kMaxStackSlot));
      }
      if (arg.kind == ArgKind::kDim3Split && arg.index + 2 > kMaxStackSlot) {
        return arg_violation(
            i, "stack",
            fmt::format("a dim3_split takes three stack slots; slot {} leaves no room for y and "
                        "z (use 0..{})",
                        arg.index, kMaxStackSlot - 2));
      }
      if (arg.kind == ArgKind::kDim3 && arg.index + 1 > kMaxStackSlot) {
        return arg_violation(
            i, "stack",
            fmt::format("a dim3 passed by value takes two stack slots; slot {} leaves no room "
                        "for z (use 0..{})",
                        arg.index, kMaxStackSlot - 1));
      }
      break;
    case ArgSource::kPtReg:
    case ArgSource::kPtRegMem:
      if (arg.index >= kRegisterSlots) {
        return arg_violation(
            i, "reg", fmt::format("register slot {} is out of range 0..{}", arg.index, kRegisterSlots - 1));
      }
      if (arg.displacement < INT16_MIN || arg.displacement > INT16_MAX) {
        return arg_violation(i, "reg", fmt::format("displacement {} does not fit 16 bits", arg.displacement));
      }
      if (arg.kind == ArgKind::kDim3 || arg.kind == ArgKind::kDim3Split) {
        return arg_violation(i, "kind", "a dim3 by value needs an argument register or stack slot");
      }
      break;
    case ArgSource::kArg: {
      // Captured in order, so only an earlier arg's value exists yet.
      if (arg.index >= i) {
        return arg_violation(i, "from",
                             fmt::format("arg #{} can only start from an earlier arg (#1..#{}); "
                                         "list the arg it reads through first",
                                         i + 1, i));
      }
      const ArgSpec& from = spec.args[arg.index];
      if (from.at_exit || arg.at_exit) {
        return arg_violation(i, "at_exit",
                             "a pointer chain is read at entry; neither its arg nor the arg it "
                             "starts from can be at_exit");
      }
      if (from.kind == ArgKind::kDim3 || from.kind == ArgKind::kDerefDim3 ||
          from.kind == ArgKind::kDim3Split || arg.kind == ArgKind::kDim3 || arg.kind == ArgKind::kDim3Split) {
        return arg_violation(i, "kind", "a pointer chain goes through one word; no dim3");
      }
      break;
    }
    case ArgSource::kUsdtArg:
      if (spec.usdt.empty()) {
        return arg_violation(i, "usdt_arg", "a USDT operand needs a probe with usdt set");
      }
      if (arg.kind == ArgKind::kDim3 || arg.kind == ArgKind::kDim3Split) {
        return arg_violation(i, "kind", "a USDT operand is one value; it cannot be a dim3");
      }
      break;
    default:
      return arg_violation(i, "reg", fmt::format("unknown argument source {}", static_cast<int>(arg.source)));
  }
  return std::nullopt;
}

// at_exit and offset read memory: only deref kinds, and at_exit only where an exit
// reads it.
std::optional<SpecViolation> check_arg_memory(const ProbeSpec& spec, std::size_t i) {
  const ArgSpec& arg = spec.args[i];
  if (arg.at_exit) {
    if (spec.split_return) {
      return arg_violation(i, "at_exit", "a split return carries no args; read them at entry");
    }
    if (!spec.with_exit) {
      return arg_violation(i, "at_exit",
                           "at_exit = true needs exit = true on the probe (an entry-only probe "
                           "has no exit to read at)");
    }
    if (!is_deref_kind(arg.kind)) {
      // Registers are clobbered by the time the function returns; only memory the
      // caller passed in (out-parameters) still holds something meaningful.
      return arg_violation(
          i, "at_exit",
          fmt::format("at_exit = true only applies to kinds that read memory (deref_u32, "
                      "deref_u64, deref_dim3, string), not kind \"{}\"; drop at_exit or use a "
                      "deref kind",
                      arg_kind_name(arg.kind)));
    }
  }
  if (arg.offset != 0 && !is_deref_kind(arg.kind)) {
    return arg_violation(
        i, "offset",
        fmt::format("offset = {} only applies to kinds that read memory (deref_u32, deref_u64, "
                    "deref_dim3, string), not kind \"{}\"",
                    arg.offset, arg_kind_name(arg.kind)));
  }
  return std::nullopt;
}

// A probe captures at most kMaxStringArgs strings; a continuing one follows the first.
std::optional<SpecViolation> check_string_arg(const ProbeSpec& spec, std::size_t i) {
  const ArgSpec& arg = spec.args[i];
  if (arg.kind == ArgKind::kString) {
    std::size_t earlier = 0;
    for (std::size_t j = 0; j < i; ++j) earlier += spec.args[j].kind == ArgKind::kString;
    if (earlier >= kMaxStringArgs) {
      return arg_violation(i, "kind",
                           fmt::format("a third string arg; at most {} strings can be captured "
                                       "per probe",
                                       kMaxStringArgs));
    }
    if (arg.continues && (earlier != 1 || arg.offset != kStringContinuation)) {
      return arg_violation(i, "continues",
                           fmt::format("a continuing string must be the second string arg, at offset {} "
                                       "of the first's pointer",
                                       kStringContinuation));
    }
  }
  return std::nullopt;
}

std::optional<SpecViolation> check_arg(const ProbeSpec& spec, std::size_t i) {
  const ArgSpec& arg = spec.args[i];
  if (auto v = check_arg_name(spec, i)) return v;
  if (arg_kind_name(arg.kind) == "?") {
    return arg_violation(i, "kind", fmt::format("unknown kind {}", static_cast<int>(arg.kind)));
  }
  if (auto v = check_arg_source(spec, i)) return v;
  if (arg_format_name(arg.format) == "?") {
    return arg_violation(i, "format", fmt::format("unknown format {}", static_cast<int>(arg.format)));
  }
  if (auto v = check_arg_memory(spec, i)) return v;
  if (auto v = check_string_arg(spec, i)) return v;
  return std::nullopt;
}

// Derived values are computed in user space from captured args, so they must name
// args that exist and must not shadow one in the JSON output.
std::optional<SpecViolation> check_derived(const ProbeSpec& spec) {
  auto is_arg = [&](std::string_view name) {
    for (const ArgSpec& a : spec.args) {
      if (a.name == name) return true;
    }
    return false;
  };
  for (std::size_t i = 0; i < spec.derived.size(); ++i) {
    const DerivedArg& d = spec.derived[i];
    if (!is_arg_identifier(d.name)) {
      return probe_violation("derived", fmt::format("derived value \"{}\": name is not valid snake_case "
                                                    "([a-z_][a-z0-9_]*)",
                                                    d.name));
    }
    bool clash = is_arg(d.name);
    for (std::size_t j = 0; j < i && !clash; ++j) clash = spec.derived[j].name == d.name;
    if (clash) {
      return probe_violation("derived", fmt::format("derived value \"{}\": name is already used by an arg "
                                                    "or another derived value",
                                                    d.name));
    }
    if (!is_arg(d.from)) {
      return probe_violation("derived", fmt::format("derived value \"{}\": from \"{}\" is not a captured "
                                                    "arg of this probe",
                                                    d.name, d.from));
    }
    if (d.op == DerivedArg::Op::kProduct && !is_arg(d.with)) {
      return probe_violation("derived", fmt::format("derived value \"{}\": with \"{}\" is not a captured "
                                                    "arg of this probe (the second factor)",
                                                    d.name, d.with));
    }
    if (d.op == DerivedArg::Op::kProduct && !d.with2.empty() && !is_arg(d.with2)) {
      return probe_violation("derived", fmt::format("derived value \"{}\": with2 \"{}\" is not a captured "
                                                    "arg of this probe (the third factor)",
                                                    d.name, d.with2));
    }
    if (d.op == DerivedArg::Op::kTimesNcclDtype && !is_arg(d.with)) {
      return probe_violation("derived", fmt::format("derived value \"{}\": with \"{}\" is not a captured "
                                                    "arg of this probe (it must hold the NCCL datatype)",
                                                    d.name, d.with));
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view arg_kind_name(ArgKind kind) {
  switch (kind) {
    case ArgKind::kRaw:
      return "raw";
    case ArgKind::kU32:
      return "u32";
    case ArgKind::kDerefU32:
      return "deref_u32";
    case ArgKind::kDerefU64:
      return "deref_u64";
    case ArgKind::kDim3:
      return "dim3";
    case ArgKind::kDerefDim3:
      return "deref_dim3";
    case ArgKind::kString:
      return "string";
    case ArgKind::kDim3Split:
      return "dim3_split";
    case ArgKind::kU8:
      return "u8";
    case ArgKind::kU16:
      return "u16";
  }
  return "?";
}

std::string_view arg_format_name(ArgFormat format) {
  switch (format) {
    case ArgFormat::kUnsigned:
      return "unsigned";
    case ArgFormat::kSigned:
      return "signed";
    case ArgFormat::kHex:
      return "hex";
  }
  return "?";
}

std::string_view return_kind_name(ReturnKind ret) {
  switch (ret) {
    case ReturnKind::kNone:
      return "none";
    case ReturnKind::kInt32:
      return "int32";
    case ReturnKind::kInt64:
      return "int64";
    case ReturnKind::kPointer:
      return "pointer";
  }
  return "?";
}

std::string_view error_rule_name(ErrorRule rule) {
  switch (rule) {
    case ErrorRule::kNone:
      return "none";
    case ErrorRule::kNonZero:
      return "nonzero";
    case ErrorRule::kNegative:
      return "negative";
    case ErrorRule::kMinusOne:
      return "minus_one";
    case ErrorRule::kNull:
      return "null";
  }
  return "?";
}

bool is_deref_kind(ArgKind kind) {
  return kind == ArgKind::kDerefU32 || kind == ArgKind::kDerefU64 || kind == ArgKind::kDerefDim3 ||
         kind == ArgKind::kString;
}

std::optional<SpecViolation> find_spec_violation(const ProbeSpec& spec) {
  if (auto v = check_probe_fields(spec)) return v;
  for (std::size_t i = 0; i < spec.args.size(); ++i) {
    if (auto v = check_arg(spec, i)) return v;
  }
  return check_derived(spec);
}

Status validate_spec(const ProbeSpec& spec) {
  auto v = find_spec_violation(spec);
  if (!v) return {};
  std::string where =
      spec.name.empty() ? std::string("probe (no name)") : fmt::format("probe \"{}\"", spec.name);
  if (v->arg >= 0) {
    const std::string& arg_name = spec.args[static_cast<std::size_t>(v->arg)].name;
    where += arg_name.empty() ? fmt::format(": arg #{}", v->arg + 1) : fmt::format(": arg \"{}\"", arg_name);
  }
  return make_error(fmt::format("{}: {}", where, v->message));
}

}  // namespace eacgm
