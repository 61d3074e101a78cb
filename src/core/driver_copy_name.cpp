#include "core/driver_copy_name.h"

namespace eacgm {
namespace {

constexpr std::string_view kCopyPrefix = "eacgm-libcuda.so.";

}  // namespace

std::string driver_module_version(std::string_view version_file) {
  std::string_view line = version_file.substr(0, version_file.find('\n'));
  while (!line.empty()) {
    const std::size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    const std::size_t end = std::min(line.find_first_of(" \t"), line.size());
    const std::string_view word = line.substr(0, end);
    line.remove_prefix(end);
    const std::size_t dot = word.find('.');
    if (dot != std::string_view::npos && dot > 0 && word.back() != '.' &&
        word.find_first_not_of("0123456789.") == std::string_view::npos) {
      return std::string(word);
    }
  }
  return {};
}

std::string driver_copy_name(std::string_view module_version, long long size, long long mtime) {
  std::string name(kCopyPrefix);
  if (!module_version.empty()) return name.append(module_version);
  return name + std::to_string(size) + "-" + std::to_string(mtime);
}

bool driver_of_version(std::string_view driver_path, std::string_view module_version) {
  if (module_version.empty()) return false;
  const std::string suffix = ".so." + std::string(module_version);
  return driver_path.size() > suffix.size() && driver_path.ends_with(suffix);
}

bool is_driver_copy(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name.size() > kCopyPrefix.size() && name.starts_with(kCopyPrefix);
}

}  // namespace eacgm
