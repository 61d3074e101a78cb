// Library-pattern matching and C++ demangling used when resolving probe specs.
#include "probe/library_match.h"

#include <cxxabi.h>
#include <fnmatch.h>

#include <cstdlib>
#include <memory>

namespace eacgm::probe {

bool library_matches(std::string_view glob, std::string_view path) {
  const std::string pattern(glob);
  if (glob.find('/') != std::string_view::npos) {
    return ::fnmatch(pattern.c_str(), std::string(path).c_str(), 0) == 0;
  }
  const std::size_t slash = path.rfind('/');
  const std::string base(slash == std::string_view::npos ? path : path.substr(slash + 1));
  return ::fnmatch(pattern.c_str(), base.c_str(), 0) == 0;
}

std::string demangle(std::string_view mangled) {
  // Itanium names start with _Z (and some toolchains emit an extra leading underscore).
  if (!(mangled.starts_with("_Z") || mangled.starts_with("__Z"))) {
    return std::string(mangled);
  }
  std::string_view suffix;
  std::string_view symbol = mangled;
  if (const std::size_t at = mangled.find('@'); at != std::string_view::npos) {
    symbol = mangled.substr(0, at);
    suffix = mangled.substr(at);
  }
  const std::string input(symbol);
  int status = 0;
  const std::unique_ptr<char, decltype(&std::free)> out(
      abi::__cxa_demangle(input.c_str(), nullptr, nullptr, &status), &std::free);
  if (status != 0 || out == nullptr) {
    return std::string(mangled);
  }
  return std::string(out.get()) + std::string(suffix);
}

}  // namespace eacgm::probe
