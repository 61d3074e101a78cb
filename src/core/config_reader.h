// The configuration file read by sections: the TOML text is parsed once and each stage
// reads its own section through a ConfigTable. Every failure names source:line:column, the
// section and what to change; unknown keys are errors with a "did you mean". Only
// config_reader.cpp sees the TOML library, so no stage compiles its header.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace eacgm {

class ConfigTable;

// One value of the parsed file: what it holds, and where it is (for messages). Valid while
// the ConfigSections::read that handed it out runs.
class ConfigValue {
 public:
  // "a table", "an integer", "a string", ...: the "not ..." of a type error.
  std::string_view type_name() const;
  bool is_table() const;
  // The string, or null when the value is not one.
  const std::string* string() const;
  std::optional<std::int64_t> integer() const;
  // The items of an array; nullopt when the value is not one.
  std::optional<std::vector<ConfigValue>> items() const;
  // The value as a table whose messages name `context`; nullopt when it is not one.
  std::optional<ConfigTable> table(std::string context) const;
  // The line the value starts on (1-based; 0 when unknown).
  std::uint32_t line() const;
  // "source:line:column: context: message" ("context: " left out when empty).
  Error fail(std::string_view context, std::string_view message) const;
  // The same, the message given in parts (joined here, not at every caller).
  Error fail(std::string_view context, std::initializer_list<std::string_view> message) const;

 private:
  friend class ConfigTable;
  friend class ConfigSections;
  ConfigValue(const void* node, std::string_view source) : node_(node), source_(source) {}

  const void* node_;         // a node of the parsed document (the TOML library's type)
  std::string_view source_;  // the file's name, first in every message
};

// A table of the file ([trace], one [[probe]], an arg's inline table) whose messages name
// its context ("[trace]", "probe \"p\"", "probe \"p\": arg \"size\""). Each read_* leaves
// `out` as it is when the key is absent (the defaults stay), and fails at the key's value
// when that is of the wrong type or out of range.
class ConfigTable {
 public:
  const std::string& context() const { return context_; }
  // The same table, its messages naming `context` instead.
  ConfigTable with_context(std::string context) const { return ConfigTable(value_, std::move(context)); }
  bool contains(std::string_view key) const;
  std::optional<ConfigValue> get(std::string_view key) const;

  // Every key is one of `allowed`; else "unknown key "k" (did you mean "x"?)", or the
  // allowed keys when none is close.
  Status check_keys(std::span<const std::string_view> allowed) const;
  Status read_integer(std::string_view key, std::int64_t lo, std::int64_t hi, std::uint32_t& out) const;
  // Integers are numbers too: `interval_s = 2` reads as 2.0.
  Status read_number(std::string_view key, double& out) const;
  // A number within lo..hi (NaN is not).
  Status read_number(std::string_view key, double lo, double hi, double& out) const;
  Status read_string(std::string_view key, std::string& out) const;
  Status read_bool(std::string_view key, bool& out) const;
  // A string naming one of `names` (kind = "deref_u64"): its index; nullopt when absent.
  Result<std::optional<std::size_t>> read_choice(std::string_view key,
                                                 std::span<const std::string_view> names) const;
  // read_choice over an enum's values, each named by `name_of`.
  template <typename Enum, std::size_t N, typename NameFn>
  Status read_enum(std::string_view key, const Enum (&values)[N], NameFn name_of, Enum& out) const {
    std::array<std::string_view, N> names;
    for (std::size_t i = 0; i < N; ++i) names[i] = name_of(values[i]);
    auto index = read_choice(key, names);
    if (!index) return std::move(index).take_error();
    if (*index) out = values[**index];
    return {};
  }

  // At the key's value (at the table when the key is absent).
  Error fail_at(std::string_view key, std::string_view message) const;
  Error fail_at(std::string_view key, std::initializer_list<std::string_view> message) const;
  // At the table: its header, or its opening brace.
  Error fail(std::string_view message) const;
  Error fail(std::initializer_list<std::string_view> message) const;
  // "key = value is out of range: hint", at the key's value.
  Error out_of_range(std::string_view key, double value, std::string_view hint) const;

 private:
  friend class ConfigValue;
  friend class ConfigSections;
  ConfigTable(ConfigValue value, std::string context) : value_(value), context_(std::move(context)) {}

  ConfigValue value_;
  std::string context_;
};

// The sections a configuration file may have, each read by the stage that owns it. The
// file's top-level keys must be added ones; each one present is handed to its reader, in
// the order they were added, and the first problem found is the error. A reader is a
// function of the value and the target it fills: `add_table<read_trace>("trace", trace)`.
class ConfigSections {
 public:
  // A top-level key of any type (`catalogs = [...]`, `[[probe]]`).
  template <auto Read, typename T>
  void add(std::string_view key, T& target) {
    add_reader(
        key, &target, [](const ConfigValue& v, void* t) { return Read(v, *static_cast<T*>(t)); }, nullptr);
  }
  // A `[key]` table, read with the context "[key]"; a value of another type is an error.
  template <auto Read, typename T>
  void add_table(std::string_view key, T& target) {
    add_reader(key, &target, nullptr,
               [](const ConfigTable& t, void* p) { return Read(t, *static_cast<T*>(p)); });
  }
  // Parses `text` and hands each section its value; `source` (usually the file's path)
  // begins every message. Text with no sections reads nothing: the defaults stay.
  Status read(std::string_view text, std::string_view source) const;
  // Reads the file at `path` ("cannot read config PATH: <reason>"), then as read().
  Status read_file(const std::string& path) const;

 private:
  using ValueReader = Status (*)(const ConfigValue&, void*);
  using TableReader = Status (*)(const ConfigTable&, void*);
  struct Section {
    std::string key;
    void* target;
    ValueReader value;  // one of the two
    TableReader table;
  };
  void add_reader(std::string_view key, void* target, ValueReader value, TableReader table);
  Status read_section(const Section& section, const ConfigValue& value) const;

  std::vector<Section> sections_;
};

}  // namespace eacgm
