// Reading `catalogs` and `[[probe]]`: the keys of a spec and of its args, the sources an
// arg reads from, and the mapping of each spec-rule violation back to its line.
#include "probe/probe_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "core/config_reader.h"
#include "core/edit_distance.h"
#include "core/spec_validate.h"
#include "probe/catalog.h"

namespace eacgm::probe {
namespace {

constexpr std::string_view kProbeKeys[] = {"name", "domain", "library", "symbol", "pattern", "exit",
                                           "ret",  "errors", "args",    "outer",  "waits"};
constexpr std::string_view kArgKeys[] = {"name", "reg",    "stack",   "from",
                                         "kind", "format", "at_exit", "offset"};

constexpr ArgKind kAllKinds[] = {ArgKind::kRaw,      ArgKind::kU32,      ArgKind::kDerefU32,
                                 ArgKind::kDerefU64, ArgKind::kDim3,     ArgKind::kDerefDim3,
                                 ArgKind::kString,   ArgKind::kDim3Split};
constexpr ArgFormat kAllFormats[] = {ArgFormat::kUnsigned, ArgFormat::kSigned, ArgFormat::kHex};
constexpr ReturnKind kAllReturns[] = {ReturnKind::kNone, ReturnKind::kInt32, ReturnKind::kInt64,
                                      ReturnKind::kPointer};
constexpr ErrorRule kAllErrorRules[] = {ErrorRule::kNone, ErrorRule::kNonZero, ErrorRule::kNegative,
                                        ErrorRule::kMinusOne, ErrorRule::kNull};

// "probe #2" until the table's name is known, then "probe \"name\"".
std::string probe_context(const ConfigTable& table, std::size_t index) {
  auto name = table.get("name");
  if (name && name->string() != nullptr) return "probe \"" + *name->string() + "\"";
  return "probe #" + std::to_string(index + 1);
}

// Whether a built-in catalog or probe has this name; if not, the message for it, with the
// name most likely meant.
std::optional<std::string> not_built_in(const std::string& name) {
  std::vector<std::string_view> catalogs;
  std::vector<std::string_view> candidates;
  for (const Catalog& c : builtin_catalogs()) {
    if (c.name == name) return std::nullopt;
    catalogs.push_back(c.name);
    candidates.push_back(c.name);
    for (const ProbeSpec& s : c.specs) {
      if (s.name == name) return std::nullopt;
      candidates.push_back(s.name);
    }
  }
  const auto meant = closest_word(name, candidates);
  return fmt::format("unknown catalog \"{}\"{}; catalogs: {} (or a probe's name: eacgm probes lists them)",
                     name, meant ? fmt::format(" (did you mean \"{}\"?)", *meant) : std::string(),
                     fmt::join(catalogs, ", "));
}

Status read_catalogs(const ConfigValue& value, CatalogNames& catalogs) {
  std::vector<std::string>& out = catalogs.names;
  auto items = value.items();
  if (!items) {
    return value.fail("",
                      {"catalogs must be an array of strings such as [\"cuda\"], not ", value.type_name()});
  }
  if (items->empty()) {
    // An empty list would read as "no catalogs" but an absent one means "the defaults";
    // make the user pick one meaning explicitly.
    return value.fail("",
                      "catalogs is empty; list the catalogs to enable, or remove the key to "
                      "enable all built-in catalogs");
  }
  for (const ConfigValue& item : *items) {
    const std::string* s = item.string();
    if (s == nullptr) return item.fail("", {"catalogs entries must be strings, not ", item.type_name()});
    if (s->empty()) return item.fail("", "catalogs has an empty name; use a catalog name such as \"cuda\"");
    for (const std::string& earlier : out) {
      if (earlier == *s) return item.fail("", {"catalog \"", *s, "\" is listed twice"});
    }
    if (auto unknown = not_built_in(*s)) {
      // A usage error, as an unknown name is when the catalogs are selected.
      Error e = item.fail("", *unknown);
      e.kind = ErrorKind::kUsage;
      catalogs.not_built_in.emplace_back(*s, std::move(e));
    }
    out.push_back(*s);
  }
  return {};
}

// What to read and how to show it (every source).
Status read_capture(const ConfigTable& table, ArgSpec& arg) {
  if (auto s = table.read_enum("kind", kAllKinds, arg_kind_name, arg.kind); !s) return s;
  if (auto s = table.read_enum("format", kAllFormats, arg_format_name, arg.format); !s) return s;
  if (auto s = table.read_bool("at_exit", arg.at_exit); !s) return s;
  std::uint32_t offset = 0;
  if (auto s = table.read_integer("offset", 0, UINT16_MAX, offset); !s) return s;
  arg.offset = static_cast<std::uint16_t>(offset);
  return {};
}

// A pointer chain: the arg reads through the value an earlier arg captured.
Status read_from(const ConfigTable& table, const std::vector<ArgSpec>& earlier, ArgSpec& arg) {
  std::string from;
  if (auto s = table.read_string("from", from); !s) return s;
  std::size_t found = earlier.size();
  std::string names;
  for (std::size_t j = 0; j < earlier.size(); ++j) {
    if (earlier[j].name == from) found = j;
    names += (names.empty() ? "" : ", ") + earlier[j].name;
  }
  if (found == earlier.size()) {
    return table.fail_at("from", {"from = \"", from, "\" names no earlier arg of this probe (",
                                  names.empty() ? "none before this one" : names, ")"});
  }
  arg.source = ArgSource::kArg;
  arg.index = static_cast<std::uint8_t>(found);
  return read_capture(table, arg);
}

// reg or stack: only a guard against values that do not fit the index field; the real
// limits (and their messages) are the spec rules applied afterwards.
Status read_index(const ConfigTable& table, bool has_reg, ArgSpec& arg) {
  arg.source = has_reg ? ArgSource::kRegister : ArgSource::kStack;
  const std::string_view key = has_reg ? "reg" : "stack";
  const ConfigValue value = *table.get(key);
  const auto number = value.integer();
  if (!number) return value.fail(table.context(), {key, " must be an integer, not ", value.type_name()});
  if (*number < 0 || *number > UINT8_MAX) {
    return value.fail(table.context(), {key, " = ", std::to_string(*number), " is out of range 0..",
                                        std::to_string(has_reg ? kMaxRegisterIndex : kMaxStackSlot)});
  }
  arg.index = static_cast<std::uint8_t>(*number);
  return read_capture(table, arg);
}

Status read_arg(const ConfigTable& untitled, const std::string& probe_ctx, std::size_t index,
                const std::vector<ArgSpec>& earlier, ArgSpec& arg) {
  std::string ctx = probe_ctx + ": arg #" + std::to_string(index + 1);
  if (auto n = untitled.get("name"); n && n->string() != nullptr)
    ctx = probe_ctx + ": arg \"" + *n->string() + "\"";
  const ConfigTable table = untitled.with_context(std::move(ctx));
  if (auto s = table.check_keys(kArgKeys); !s) return s;
  if (!table.contains("name")) return table.fail("missing required key \"name\" (such as \"size\")");
  if (auto s = table.read_string("name", arg.name); !s) return s;

  const bool has_reg = table.contains("reg");
  const bool has_stack = table.contains("stack");
  const bool has_from = table.contains("from");
  if (has_reg && has_stack) {
    return table.fail_at("stack", "give either reg (argument register) or stack (stack slot), not both");
  }
  if (has_from && (has_reg || has_stack)) {
    return table.fail_at(
        "from", {"give either from (an earlier arg's value) or ", has_reg ? "reg" : "stack", ", not both"});
  }
  if (!has_reg && !has_stack && !has_from) {
    return table.fail({"missing \"reg\" (argument register 0..", std::to_string(kMaxRegisterIndex),
                       "), \"stack\" (stack slot 0..", std::to_string(kMaxStackSlot),
                       ") or \"from\" (an earlier arg)"});
  }
  if (has_from) return read_from(table, earlier, arg);
  return read_index(table, has_reg, arg);
}

// args: an array of tables, each one arg.
Status read_args(const ConfigTable& table, ProbeSpec& spec) {
  auto node = table.get("args");
  if (!node) return {};
  auto items = node->items();
  if (!items) {
    return node->fail(
        table.context(),
        {"args must be an array of tables such as [{ name = \"size\", reg = 1 }], not ", node->type_name()});
  }
  for (std::size_t i = 0; i < items->size(); ++i) {
    const ConfigValue& item = (*items)[i];
    auto arg_table = item.table(table.context());
    if (!arg_table) {
      return item.fail(table.context(),
                       {"arg #", std::to_string(i + 1),
                        " must be a table such as { name = \"size\", reg = 1 }, not ", item.type_name()});
    }
    ArgSpec arg;
    if (auto s = read_arg(*arg_table, table.context(), i, spec.args, arg); !s) return s;
    spec.args.push_back(std::move(arg));
  }
  return {};
}

// Which function: the library glob and either an exact symbol or a pattern.
Status read_target(const ConfigTable& table, ProbeSpec& spec) {
  if (!table.contains("library")) {
    return table.fail(
        "missing required key \"library\" (a glob on the library file name such as "
        "\"libfoo.so*\")");
  }
  if (auto s = table.read_string("library", spec.library); !s) return s;
  const bool has_symbol = table.contains("symbol");
  const bool has_pattern = table.contains("pattern");
  if (has_symbol && has_pattern) {
    return table.fail_at("pattern",
                         "give either symbol (one exact name) or pattern (a glob over symbols), not both");
  }
  if (!has_symbol && !has_pattern) {
    return table.fail(
        "missing \"symbol\" (the exact function name) or \"pattern\" (a glob over symbol names)");
  }
  spec.symbol_is_pattern = has_pattern;
  return table.read_string(has_pattern ? "pattern" : "symbol", spec.symbol);
}

Status read_probe(const ConfigTable& table, ProbeSpec& spec) {
  if (auto s = table.check_keys(kProbeKeys); !s) return s;
  if (!table.contains("name")) return table.fail("missing required key \"name\" (a unique probe name)");
  if (auto s = table.read_string("name", spec.name); !s) return s;
  spec.domain = "user";
  if (auto s = table.read_string("domain", spec.domain); !s) return s;
  if (auto s = read_target(table, spec); !s) return s;
  spec.with_exit = true;
  if (auto s = table.read_bool("exit", spec.with_exit); !s) return s;
  if (auto s = table.read_bool("outer", spec.outer); !s) return s;
  if (auto s = table.read_bool("waits", spec.waits); !s) return s;
  spec.ret = spec.with_exit ? ReturnKind::kInt32 : ReturnKind::kNone;
  if (auto s = table.read_enum("ret", kAllReturns, return_kind_name, spec.ret); !s) return s;
  // A user's function returns data unless its spec says which results are failures.
  ErrorRule errors = ErrorRule::kNone;
  if (auto s = table.read_enum("errors", kAllErrorRules, error_rule_name, errors); !s) return s;
  spec.errors = errors;
  if (auto s = read_args(table, spec); !s) return s;

  // The rules shared with the built-in catalogs; point at the key that broke one.
  if (auto v = find_spec_violation(spec)) {
    if (v->arg < 0) return table.fail_at(v->key, v->message);
    const auto i = static_cast<std::size_t>(v->arg);
    const std::string& name = spec.args[i].name;
    std::string where =
        table.context() + (name.empty() ? ": arg #" + std::to_string(i + 1) : ": arg \"" + name + "\"");
    return (*table.get("args")->items())[i].table(std::move(where))->fail_at(v->key, v->message);
  }
  return {};
}

Status read_probes(const ConfigValue& value, std::vector<ProbeSpec>& out) {
  auto items = value.items();
  if (!items) {
    return value.fail(
        "", {"probe must be an array of tables: write each probe under its own [[probe]] header, not ",
             value.is_table() ? "[probe]" : value.type_name()});
  }
  const std::size_t first = out.size();
  std::vector<std::uint32_t> name_lines;  // of out[first...]
  for (std::size_t i = 0; i < items->size(); ++i) {
    const ConfigValue& item = (*items)[i];
    auto untitled = item.table("");
    if (!untitled) {
      return item.fail("", {"probe #", std::to_string(i + 1), " must be a table, not ", item.type_name()});
    }
    // Every later message names the probe as soon as its name is known.
    const ConfigTable table = untitled->with_context(probe_context(*untitled, i));
    ProbeSpec spec;
    if (auto s = read_probe(table, spec); !s) return s;
    const ConfigValue name = *table.get("name");
    for (std::size_t j = first; j < out.size(); ++j) {
      if (out[j].name != spec.name) continue;
      return name.fail(table.context(),
                       {"duplicate probe name (first defined at line ", std::to_string(name_lines[j - first]),
                        "); probe names must be unique"});
    }
    name_lines.push_back(name.line());
    out.push_back(std::move(spec));
  }
  return {};
}

}  // namespace

void add_catalogs_section(ConfigSections& sections, CatalogNames& catalogs) {
  sections.add<read_catalogs>("catalogs", catalogs);
}

Status check_catalog_names(const CatalogNames& catalogs, const std::vector<ProbeSpec>& specs) {
  for (const auto& unknown : catalogs.not_built_in) {
    const std::string& name = unknown.first;
    const bool user = std::any_of(specs.begin(), specs.end(),
                                  [&](const ProbeSpec& s) { return s.name == name || s.domain == name; });
    if (!user) return unknown.second;
  }
  return {};
}

void add_probe_section(ConfigSections& sections, std::vector<ProbeSpec>& specs) {
  sections.add<read_probes>("probe", specs);
}

}  // namespace eacgm::probe
