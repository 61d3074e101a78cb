// The TOML side of the configuration: parsing, the typed reads with their ranges, and the
// messages that point at the line and column of what to change. Messages are joined from
// parts, not formatted: the TOML library is this file's compile time, and fmt's would
// nearly double it.
#include "core/config_reader.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

#include "core/edit_distance.h"

namespace eacgm {
namespace {

// Files larger than this are not configs; refusing them keeps a wrong --config
// (a log, a core dump) from eating memory.
constexpr std::size_t kMaxConfigBytes = 16u << 20;

// Every pointer a ConfigValue holds is a toml::node's.
const toml::node& node_of(const void* node) { return *static_cast<const toml::node*>(node); }

std::string cat(std::initializer_list<std::string_view> parts) {
  std::size_t size = 0;
  for (std::string_view p : parts) size += p.size();
  std::string out;
  out.reserve(size);
  for (std::string_view p : parts) out += p;
  return out;
}

// A number as fmt's "{}" writes it: the shortest digits that read back as the same value,
// in fixed notation unless the exponent is below -4 or 16 and above ("1e-05", "3600").
std::string number(double value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<std::size_t>(end - buf));
  const std::size_t e = sci.find('e');
  if (ec != std::errc() || !std::isfinite(value) || e == std::string_view::npos) return std::string(sci);
  int exponent = 0;
  std::from_chars(sci.data() + e + (sci[e + 1] == '+' ? 2 : 1), sci.data() + sci.size(), exponent);
  if (exponent < -4 || exponent >= 16) return std::string(sci);
  end = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed).ptr;
  return std::string(buf, static_cast<std::size_t>(end - buf));
}

std::string number(std::int64_t value) { return std::to_string(value); }

std::string join(std::span<const std::string_view> words) {
  std::string out;
  for (std::string_view w : words) {
    if (!out.empty()) out += ", ";
    out += w;
  }
  return out;
}

std::string_view type_name_of(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

Error fail_at_region(std::string_view source, const toml::source_region& where, std::string_view context,
                     std::string_view message) {
  std::string loc =
      where.begin.line > 0
          ? cat({source, ":", std::to_string(where.begin.line), ":", std::to_string(where.begin.column)})
          : std::string(source);
  if (context.empty()) return make_error(cat({loc, ": ", message}));
  return make_error(cat({loc, ": ", context, ": ", message}));
}

Result<std::string> read_config_text(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const int err = errno;
    return make_errno_error(err,
                            cat({"cannot read config ", path, ": ", std::generic_category().message(err)}));
  }
  std::string text;
  char buf[65536];
  int read_errno = 0;
  bool too_large = false;
  for (;;) {
    std::size_t n = std::fread(buf, 1, sizeof buf, file);
    text.append(buf, n);
    if (text.size() > kMaxConfigBytes) {
      too_large = true;
      break;
    }
    if (n < sizeof buf) {
      if (std::ferror(file)) read_errno = errno;
      break;
    }
  }
  std::fclose(file);
  if (too_large) {
    return make_error(cat({"cannot read config ", path, ": larger than ",
                           std::to_string(kMaxConfigBytes >> 20), " MiB; is this the right file?"}));
  }
  if (read_errno != 0) {
    return make_errno_error(
        read_errno, cat({"cannot read config ", path, ": ", std::generic_category().message(read_errno)}));
  }
  return text;
}

}  // namespace

std::string_view ConfigValue::type_name() const { return type_name_of(node_of(node_)); }

bool ConfigValue::is_table() const { return node_of(node_).is_table(); }

const std::string* ConfigValue::string() const {
  const auto* s = node_of(node_).as_string();
  return s != nullptr ? &s->get() : nullptr;
}

std::optional<std::int64_t> ConfigValue::integer() const {
  const auto* i = node_of(node_).as_integer();
  if (i == nullptr) return std::nullopt;
  return i->get();
}

std::optional<std::vector<ConfigValue>> ConfigValue::items() const {
  const toml::array* arr = node_of(node_).as_array();
  if (arr == nullptr) return std::nullopt;
  std::vector<ConfigValue> out;
  out.reserve(arr->size());
  for (const toml::node& item : *arr) out.push_back(ConfigValue(&item, source_));
  return out;
}

std::optional<ConfigTable> ConfigValue::table(std::string context) const {
  if (!is_table()) return std::nullopt;
  return ConfigTable(*this, std::move(context));
}

std::uint32_t ConfigValue::line() const { return node_of(node_).source().begin.line; }

Error ConfigValue::fail(std::string_view context, std::string_view message) const {
  return fail_at_region(source_, node_of(node_).source(), context, message);
}

Error ConfigValue::fail(std::string_view context, std::initializer_list<std::string_view> message) const {
  return fail(context, cat(message));
}

bool ConfigTable::contains(std::string_view key) const {
  return node_of(value_.node_).as_table()->contains(key);
}

std::optional<ConfigValue> ConfigTable::get(std::string_view key) const {
  const toml::node* node = node_of(value_.node_).as_table()->get(key);
  if (node == nullptr) return std::nullopt;
  return ConfigValue(node, value_.source_);
}

Error ConfigTable::fail_at(std::string_view key, std::string_view message) const {
  auto value = get(key);
  return (value ? *value : value_).fail(context_, message);
}

Error ConfigTable::fail_at(std::string_view key, std::initializer_list<std::string_view> message) const {
  return fail_at(key, cat(message));
}

Error ConfigTable::fail(std::string_view message) const { return value_.fail(context_, message); }

Error ConfigTable::fail(std::initializer_list<std::string_view> message) const { return fail(cat(message)); }

Error ConfigTable::out_of_range(std::string_view key, double value, std::string_view hint) const {
  return fail_at(key, {key, " = ", number(value), " is out of range: ", hint});
}

Status ConfigTable::check_keys(std::span<const std::string_view> allowed) const {
  for (auto&& [key, node] : *node_of(value_.node_).as_table()) {
    (void)node;
    if (std::find(allowed.begin(), allowed.end(), key.str()) != allowed.end()) continue;
    auto guess = closest_word(key.str(), allowed);
    std::string hint = guess ? cat({"did you mean \"", *guess, "\"?"}) : "expected one of " + join(allowed);
    return fail_at_region(value_.source_, key.source(), context_,
                          cat({"unknown key \"", key.str(), "\" (", hint, ")"}));
  }
  return {};
}

Status ConfigTable::read_integer(std::string_view key, std::int64_t lo, std::int64_t hi,
                                 std::uint32_t& out) const {
  auto value = get(key);
  if (!value) return {};
  auto v = value->integer();
  if (!v) return value->fail(context_, {key, " must be an integer, not ", value->type_name()});
  if (*v < lo || *v > hi) {
    return value->fail(context_, {key, " = ", number(*v), " is out of range ", number(lo), "..", number(hi)});
  }
  out = static_cast<std::uint32_t>(*v);
  return {};
}

Status ConfigTable::read_number(std::string_view key, double& out) const {
  auto value = get(key);
  if (!value) return {};
  const toml::node& node = node_of(value->node_);
  if (const auto* i = node.as_integer()) {
    out = static_cast<double>(i->get());
  } else if (const auto* f = node.as_floating_point()) {
    out = f->get();
  } else {
    return value->fail(context_, {key, " must be a number, not ", value->type_name()});
  }
  return {};
}

Status ConfigTable::read_number(std::string_view key, double lo, double hi, double& out) const {
  if (auto s = read_number(key, out); !s || !contains(key)) return s;
  // Written as !(in range) so NaN fails too.
  if (!(out >= lo && out <= hi)) {
    return fail_at(key, {key, " = ", number(out), " is out of range ", number(lo), "..", number(hi)});
  }
  return {};
}

Status ConfigTable::read_string(std::string_view key, std::string& out) const {
  auto value = get(key);
  if (!value) return {};
  const std::string* s = value->string();
  if (s == nullptr) return value->fail(context_, {key, " must be a string, not ", value->type_name()});
  out = *s;
  return {};
}

Status ConfigTable::read_bool(std::string_view key, bool& out) const {
  auto value = get(key);
  if (!value) return {};
  const auto* b = node_of(value->node_).as_boolean();
  if (b == nullptr) return value->fail(context_, {key, " must be true or false, not ", value->type_name()});
  out = b->get();
  return {};
}

Result<std::optional<std::size_t>> ConfigTable::read_choice(std::string_view key,
                                                            std::span<const std::string_view> names) const {
  std::string text;
  if (auto s = read_string(key, text); !s) return std::move(s).take_error();
  auto value = get(key);
  if (!value) return std::optional<std::size_t>();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == text) return std::optional<std::size_t>(i);
  }
  auto guess = closest_word(text, names);
  const std::string expected = "expected one of " + join(names);
  std::string hint = guess ? cat({"did you mean \"", *guess, "\"? ", expected}) : expected;
  return value->fail(context_, {"unknown ", key, " \"", text, "\" (", hint, ")"});
}

void ConfigSections::add_reader(std::string_view key, void* target, ValueReader value, TableReader table) {
  sections_.push_back({std::string(key), target, value, table});
}

Status ConfigSections::read_section(const Section& section, const ConfigValue& value) const {
  if (section.value != nullptr) return section.value(value, section.target);
  auto table = value.table("[" + section.key + "]");
  if (!table) {
    return value.fail("", {section.key, " must be a table ([", section.key, "]), not ", value.type_name()});
  }
  return section.table(*table, section.target);
}

Status ConfigSections::read(std::string_view text, std::string_view source) const {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    return make_error(cat({source, ":", std::to_string(begin.line), ":", std::to_string(begin.column),
                           ": TOML syntax error: ", e.description()}));
  }
  const ConfigTable top(ConfigValue(static_cast<const toml::node*>(&root), source), "");
  std::vector<std::string_view> keys;
  keys.reserve(sections_.size());
  for (const Section& s : sections_) keys.push_back(s.key);
  if (auto s = top.check_keys(keys); !s) return s;
  for (const Section& section : sections_) {
    if (auto value = top.get(section.key)) {
      if (auto s = read_section(section, *value); !s) return s;
    }
  }
  return {};
}

Status ConfigSections::read_file(const std::string& path) const {
  auto text = read_config_text(path);
  if (!text) return std::move(text).take_error();
  return read(*text, path);
}

}  // namespace eacgm
