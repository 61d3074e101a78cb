// Usage errors: readable checks for seconds, one-line messages (with the command or option
// a mistyped word most likely meant), exit code 2.
#include "cli/usage_errors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>

#include "core/edit_distance.h"

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

namespace {

// "eacgm", then the name of each command parsed down to `upto` (the innermost when null):
// "eacgm govern status". Not argv[0], which may be a path.
std::string command_path(const CLI::App& root, const CLI::App* upto = nullptr) {
  std::string command = "eacgm";
  for (const CLI::App* sub = &root; sub != upto;) {
    const auto parsed = sub->get_subcommands();
    if (parsed.empty()) break;
    sub = parsed.back();
    command += " " + sub->get_name();
  }
  return command;
}

// The innermost parsed command that left words over, or null.
const CLI::App* app_with_leftovers(const CLI::App& root) {
  for (const CLI::App* app = &root;;) {
    if (!app->remaining(false).empty()) return app;
    const auto parsed = app->get_subcommands();
    if (parsed.empty()) return nullptr;
    app = parsed.back();
  }
}

// Other tools' words for what an option of eacgm's is called otherwise; suggested when
// the command has that option.
struct OptionAlias {
  std::string_view said;
  std::string_view meant;
};
constexpr OptionAlias kOptionAliases[] = {
    {"--port", "--listen"}, {"--host", "--listen"}, {"--bind", "--listen"},    {"--address", "--listen"},
    {"--addr", "--listen"}, {"--url", "--server"},  {"--endpoint", "--server"}};

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// The closest of `names` to `word`, if one is close enough to be meant.
std::optional<std::string> closest_name(std::string_view word, const std::vector<std::string>& names) {
  const std::vector<std::string_view> views(names.begin(), names.end());
  auto found = closest_word(word, views);
  if (!found) return std::nullopt;
  return std::string(*found);
}

// The first word `app` left over, named in the order it was given, with what was meant.
std::string leftover_message(const CLI::App& app, const std::string& command) {
  const std::string word = app.remaining(false).front();
  if (word.size() > 1 && word[0] == '-') {
    const std::string name = word.substr(0, word.find('='));
    const std::vector<std::string> names = option_names(app);
    std::optional<std::string> meant;
    for (const OptionAlias& a : kOptionAliases) {
      if (name == a.said && std::find(names.begin(), names.end(), a.meant) != names.end())
        meant = std::string(a.meant);
    }
    if (!meant) meant = closest_name(name, names);
    if (meant) return fmt::format("{}: unknown option {} (did you mean {}?)", command, name, *meant);
    return fmt::format("{}: unknown option {} (see {} --help)", command, name, command);
  }
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }))
    commands.push_back(sub->get_name());
  if (commands.empty())
    return fmt::format("{}: unexpected argument '{}' (see {} --help)", command, word, command);
  if (auto meant = closest_name(word, commands))
    return fmt::format("{}: unknown command '{}' (did you mean '{}'?)", command, word, *meant);
  return fmt::format("{}: unknown command '{}' (commands: {})", command, word, fmt::join(commands, ", "));
}

}  // namespace

std::string usage_error_line(const CLI::App& app, const CLI::ParseError& e) {
  // CLI11 names the words left over in reverse and suggests nothing.
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    if (const CLI::App* left = app_with_leftovers(app))
      return leftover_message(*left, command_path(app, left));
  }
  const std::string command = command_path(app);
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

std::string usage_text(const CLI::App& app) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_name().empty(); }))
    commands.push_back(sub->get_name());
  return fmt::format(
      "usage: eacgm COMMAND [OPTIONS] (eacgm --help describes the commands, eacgm COMMAND --help their "
      "options)\ncommands: {}",
      fmt::join(commands, ", "));
}

int exit_for_parse_error(CLI::App& app, const CLI::ParseError& e) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success))
    return app.exit(e);  // --help, --version
  std::fprintf(stderr, "%s\n", usage_error_line(app, e).c_str());
  return 2;
}

}  // namespace eacgm::cli
