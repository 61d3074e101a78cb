// Usage errors (bad flags, bad values, unknown options) end eacgm with exit code 2 and
// one line on stderr, as docs/cli.md says; --help and --version still exit 0.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace eacgm::cli {

// A number of seconds for options such as --duration and --interval. Rejects what is not
// a finite number, negative numbers, and 0 unless `allow_zero`; the message names the
// value and the accepted range in words (`zero_means` says what 0 does, when allowed).
CLI::Validator seconds_validator(bool allow_zero, const std::string& zero_means = "");

// A comma-separated list option (--probes), repeatable, its names appended to `out`: an
// empty name ("cuda,,", ",cuda", "") is an error naming the option, never skipped.
CLI::Option* add_list_option(CLI::App& app, const std::string& name, std::vector<std::string>& out,
                             const std::string& description);

// The one line for a usage error: "eacgm trace: --format: xml not in {jsonl,text} (see
// eacgm trace --help)", with CLI11's message folded onto one line. Words the command line
// left over are named in the order given, with the closest command or option when one is
// near: "eacgm: unknown command 'toop' (did you mean 'top'?)", "eacgm serve: unknown
// option --port (did you mean --listen?)".
std::string usage_error_line(const CLI::App& app, const CLI::ParseError& e);

// What `eacgm` alone prints: how to call it and its commands, on two lines.
std::string usage_text(const CLI::App& app);

// What main() returns for a parse error: --help and --version print as usual and give
// 0; every other parse error prints usage_error_line() on stderr and gives 2.
int exit_for_parse_error(CLI::App& app, const CLI::ParseError& e);

}  // namespace eacgm::cli
