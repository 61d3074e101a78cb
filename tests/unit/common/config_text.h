// Test support for the configuration's sections: text with numbered lines, and a file
// read with only the sections one stage adds, so a stage's tests see its own messages as
// the whole file would give them.
#pragma once

#include <gmock/gmock.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "core/config_reader.h"

// The matchers the sections' tests check their messages with.
namespace eacgm {
using ::testing::HasSubstr;
using ::testing::StartsWith;
}  // namespace eacgm

namespace eacgm::test {

// Line i (1-based) of the result is ls[i-1], so tests can name line numbers.
inline std::string lines(std::initializer_list<const char*> ls) {
  std::string out;
  for (const char* l : ls) {
    out += l;
    out += '\n';
  }
  return out;
}

// One stage's sections read alone, as the whole file reads them: what a file of
// `text` gives (`source` begins every message), or the error it gives.
template <typename T>
class SectionText {
 public:
  using Add = void (*)(ConfigSections&, T&);
  explicit SectionText(Add add) : add_(add) {}

  Result<T> parse(std::string_view text, std::string_view source = "eacgm.toml") const {
    T value{};
    ConfigSections sections;
    add_(sections, value);
    if (auto s = sections.read(text, source); !s) return std::move(s).take_error();
    return value;
  }
  // The message, or "<accepted>".
  std::string error_of(std::string_view text) const {
    Result<T> r = parse(text);
    return r.ok() ? std::string("<accepted>") : r.error();
  }
  // The same of a file of these lines.
  Result<T> parse(std::initializer_list<const char*> ls) const { return parse(lines(ls)); }
  std::string error_of(std::initializer_list<const char*> ls) const { return error_of(lines(ls)); }

 private:
  Add add_;
};

}  // namespace eacgm::test
