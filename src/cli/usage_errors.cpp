// Usage errors: readable checks for seconds, one-line messages, exit code 2.
#include "cli/usage_errors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace eacgm::cli {

CLI::Validator seconds_validator(bool allow_zero, const std::string& zero_means) {
  const std::string range = allow_zero ? "0 or more" : "more than 0";
  std::string desc = allow_zero ? "SECONDS>=0" : "SECONDS>0";
  return CLI::Validator(
      [allow_zero, range, zero_means](std::string& value) -> std::string {
        const char* begin = value.c_str();
        char* end = nullptr;
        errno = 0;
        const double v = std::strtod(begin, &end);
        const bool number = end != begin && *end == '\0' && errno == 0 && std::isfinite(v);
        if (!number)
          return fmt::format("\"{}\" is not a number of seconds; use {}{}", value, range, zero_means);
        if (v < 0 || (v == 0 && !allow_zero))
          return fmt::format("{} seconds is out of range; use {}{}", value, range, zero_means);
        return {};
      },
      desc, "SECONDS");
}

namespace {

// "a,b,c" split at every comma, empty pieces kept.
std::vector<std::string> split_names(const std::string& value) {
  std::vector<std::string> names;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = std::min(value.find(',', start), value.size());
    names.push_back(value.substr(start, end - start));
    if (end == value.size()) return names;
    start = end + 1;
  }
}

}  // namespace

CLI::Option* add_list_option(CLI::App& app, const std::string& name, std::vector<std::string>& out,
                             const std::string& description) {
  const CLI::Validator names(
      [](std::string& value) -> std::string {
        for (const std::string& n : split_names(value)) {
          if (n.find_first_not_of(" \t") == std::string::npos)
            return fmt::format("\"{}\" has an empty name (names are separated by single commas)", value);
        }
        return {};
      },
      "NAME[,NAME...]", "names");
  return app.add_option(name, description)
      ->type_name("NAME[,NAME...]")
      ->take_all()
      ->check(names)
      ->each([&out](const std::string& value) {
        for (std::string& n : split_names(value)) out.push_back(std::move(n));
      });
}

std::string usage_error_line(const CLI::App& app, const CLI::ParseError& e) {
  std::string command = "eacgm";  // not argv[0], which may be a path
  for (const CLI::App* sub = &app;;) {
    const auto parsed = sub->get_subcommands();
    if (parsed.empty()) break;
    sub = parsed.back();
    command += " " + sub->get_name();
  }
  std::string message;
  bool space = false;
  for (char c : std::string(e.what())) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !message.empty();
      continue;
    }
    if (space) message += ' ';
    space = false;
    message += c;
  }
  if (message.empty()) message = e.get_name();
  return fmt::format("{}: {} (see {} --help)", command, message, command);
}

int exit_for_parse_error(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
    return app.exit(e);  // --help, --version
  std::fprintf(stderr, "%s\n", usage_error_line(app, e).c_str());
  return 2;
}

}  // namespace eacgm::cli
