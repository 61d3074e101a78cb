// `eacgm probes [--check | --calibrate]`: the catalogs, which libraries and symbols
// resolve here, and what one probe hit costs on this machine.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "cli/environment.h"
#include "cli/trace_runner.h"
#include "core/spec_validate.h"
#include "node/node_config.h"
#include "probe/catalog.h"
#include "probe/elf_symbols.h"
#include "probe/interpreter_modes.h"
#include "probe/interpreter_scan.h"
#include "probe/library_match.h"
#include "probe/library_scan.h"
#include "probe/python_layouts.h"
#include "probe/trap_calibration.h"
#include "probe/usdt_notes.h"

namespace eacgm::cli {
namespace {

std::string describe_args(const ProbeSpec& s) {
  std::string out;
  for (const auto& a : s.args) {
    const char* where = "stack";
    if (a.source == ArgSource::kRegister) where = "reg";
    if (a.source == ArgSource::kUsdtArg) where = "usdt_arg";
    if (a.source == ArgSource::kPtReg || a.source == ArgSource::kPtRegMem) where = "slot";
    if (a.source == ArgSource::kArg) where = "arg";  // through an earlier arg (a pointer chain)
    out += fmt::format("{}{}={}{}:{}{}", out.empty() ? "" : " ", a.name, where, a.index,
                       arg_kind_name(a.kind), a.at_exit ? "@exit" : "");
  }
  return out.empty() ? "-" : out;
}

// How many sites of USDT probe "provider:name" the file has.
std::size_t usdt_sites(const std::string& path, const std::string& usdt) {
  auto notes = probe::read_usdt_probes(path);
  if (!notes) return 0;
  std::size_t n = 0;
  for (const auto& p : *notes) n += usdt == p.provider + ":" + p.name;
  return n;
}

bool file_has_usdt_probe(const std::string& path, const std::string& probe_name) {
  auto notes = probe::read_usdt_probes(path);
  return notes && probe::has_usdt_probe(*notes, probe_name);
}

// The function the frame-reading spec probes, from its catalog.
const std::string& eval_frame_symbol() {
  static const std::string symbol = [] {
    for (const auto& c : probe::builtin_catalogs()) {
      for (const auto& s : c.specs) {
        if (s.name == probe::kPythonFrameSpec) return s.symbol;
      }
    }
    return std::string();
  }();
  return symbol;
}

// One file's line for a spec: whether it resolves, and in which mode.
struct FileCheck {
  std::size_t symbols = 0;
  bool elsewhere = false;  // left to another spec in this file (its USDT probes)
  std::string detail;      // "1 symbol(s)", "has USDT probes [mode: USDT]", ...
  const char* mark() const { return symbols > 0 ? "ok" : elsewhere ? "==" : "--"; }
};

FileCheck check_file(const ProbeSpec& s, const std::string& path, const std::string& open_path,
                     const probe::ElfSymbolTable& elf) {
  FileCheck c;
  if (!s.usdt.empty()) {
    c.symbols = usdt_sites(open_path, s.usdt);
    c.detail = c.symbols > 0 ? fmt::format("{} USDT site(s) [mode: USDT]", c.symbols) : "no USDT site";
    // An interpreter built without USDT notes is read through its frames instead.
    if (c.symbols == 0 && !eval_frame_symbol().empty() && elf.find(eval_frame_symbol()) != nullptr &&
        probe::python_interpreter_layout(path, open_path, elf)) {
      c.elsewhere = true;
      c.detail += fmt::format("; traced by frame reading ({}) instead", probe::kPythonFrameSpec);
    }
    return c;
  }
  if (!s.unless_usdt.empty() && file_has_usdt_probe(open_path, s.unless_usdt)) {
    c.elsewhere = true;
    c.detail = fmt::format("traced by its USDT probes ({}) instead [mode: USDT]", s.unless_usdt);
    return c;
  }
  c.symbols = s.symbol_is_pattern ? elf.match(s.symbol).size() : (elf.find(s.symbol) ? 1 : 0);
  c.detail = fmt::format("{} symbol(s)", c.symbols);
  if (c.symbols > 0 && s.layout == ArgLayout::kCPythonFrame) {
    auto interp = probe::python_interpreter_layout(path, open_path, elf);
    if (!interp) {
      c.symbols = 0;
      c.detail = fmt::format("{} found, but {}", s.symbol, interp.error());
    } else {
      const auto& v = interp->layout->version;
      c.detail += fmt::format(" [mode: frame reading, CPython {}.{} layout, version from {}]", v.major,
                              v.minor, interp->version_from);
    }
  }
  return c;
}

struct Candidate {
  std::string path;
  std::string open_path;
  std::set<int> pids;
};

// Library files on this machine (running processes, the loader cache, and the code
// files of the Python interpreters installed), by identity.
std::map<std::pair<std::uint64_t, std::uint64_t>, Candidate> find_library_files(
    const std::vector<probe::FoundInterpreter>& interpreters) {
  std::map<std::pair<std::uint64_t, std::uint64_t>, Candidate> files;
  if (auto cache = probe::ld_cache_libraries()) {
    for (const auto& lib : *cache) {
      if (auto id = probe::file_identity(lib.path)) files.emplace(*id, Candidate{lib.path, lib.path, {}});
    }
  }
  for (const auto& f : probe::scan_maps({}).files) {
    auto [it, inserted] = files.emplace(std::make_pair(f.dev, f.inode), Candidate{f.path, f.open_path, {}});
    it->second.pids.insert(f.pids.begin(), f.pids.end());
  }
  // pyenv's and conda's interpreters are in no loader cache: their files are not found
  // there unless a process maps them now.
  for (const auto& py : interpreters) {
    if (py.code_file.empty()) continue;
    if (auto id = probe::file_identity(py.code_file))
      files.emplace(*id, Candidate{py.code_file, py.code_file, {}});
  }
  return files;
}

// Every interpreter found, with the modes eacgm would trace it in.
void print_interpreters(const std::vector<probe::FoundInterpreter>& interpreters) {
  std::printf(
      "python interpreters: %zu found (pyenv, conda, virtualenvs, python3 on PATH, system); `--probes "
      "python` "
      "traces their calls, `eacgm run` samples their stacks\n",
      interpreters.size());
  for (const auto& py : interpreters) {
    std::string version = "CPython ?";
    if (py.version) {
      version = fmt::format("CPython {}.{}{} (version from {})", py.version->major, py.version->minor,
                            py.abi_flags, py.version_from);
    }
    auto facts = probe::read_interpreter_facts(py);
    const probe::InterpreterModes modes =
        facts ? probe::interpreter_modes(*facts) : probe::InterpreterModes{};
    const bool traced = modes.calls != probe::CallMode::kNone || modes.sampled;
    std::printf("  %s %s: %s; %s\n", traced ? "ok" : "--", py.path.c_str(), version.c_str(),
                fmt::format("{}", fmt::join(py.found_as, ", ")).c_str());
    if (!facts) {
      std::printf("      not traced: %s\n", facts.error().c_str());
      continue;
    }
    if (py.code_file != py.path) std::printf("      code in %s\n", py.code_file.c_str());
    std::printf("      calls: %s\n", modes.calls_text.c_str());
    std::printf("      stacks: %s\n", modes.stacks_text.c_str());
  }
}

int list_probes(const CommandContext& ctx, bool check) {
  auto loaded = node::load_config(ctx.config_path);
  if (!loaded) {
    print_error(loaded.error());
    return 2;
  }
  const agent::AgentConfig& config = loaded->agent;
  std::vector<probe::Catalog> catalogs = probe::builtin_catalogs();
  if (!config.probes.empty()) catalogs.push_back({"user", "probes from " + ctx.config_path, config.probes});

  std::map<std::pair<std::uint64_t, std::uint64_t>, Candidate> files;
  std::vector<probe::FoundInterpreter> interpreters;
  if (check) {
    interpreters = probe::scan_interpreters(probe::default_interpreter_places(interpreter_environment()));
    files = find_library_files(interpreters);
  }
  std::map<std::string, std::unique_ptr<probe::ElfSymbolTable>> elf_cache;
  // With --check the details are kept and printed after a summary of them.
  std::string body;
  const auto out = [&](const std::string& line) {
    if (check) {
      body += line;
    } else {
      std::fputs(line.c_str(), stdout);
    }
  };
  int specs_total = 0;
  std::vector<std::string> nowhere;  // the specs that resolve nowhere
  for (const auto& c : catalogs) {
    out(fmt::format("{}: {}\n", c.name, c.description));
    for (const auto& s : c.specs) {
      ++specs_total;
      out(fmt::format("  {:<28} {:<16} {}{}  args: {}\n", s.name, s.library,
                      s.usdt.empty() ? (s.symbol_is_pattern ? "pattern " : "") : "usdt ",
                      s.usdt.empty() ? s.symbol : s.usdt, describe_args(s)));
      if (!check) continue;
      int resolved = 0;
      int elsewhere = 0;
      for (const auto& [id, f] : files) {
        if (!probe::library_matches(s.library, f.path)) continue;
        auto& elf = elf_cache[f.open_path];
        if (!elf) {
          auto loaded = probe::ElfSymbolTable::load(f.open_path);
          if (!loaded) {
            out(fmt::format("      ! {}: {}\n", f.path, loaded.error()));
            continue;
          }
          elf = std::make_unique<probe::ElfSymbolTable>(std::move(*loaded));
        }
        const FileCheck fc = check_file(s, f.path, f.open_path, *elf);
        std::string users =
            f.pids.empty() ? "not mapped now" : fmt::format("mapped by {} process(es)", f.pids.size());
        out(fmt::format("      {} {}: {}, {}\n", fc.mark(), f.path, fc.detail, users));
        if (fc.symbols > 0) ++resolved;
        if (fc.elsewhere) ++elsewhere;
      }
      if (resolved == 0 && elsewhere > 0) continue;  // every such file is traced another way
      if (resolved == 0 && !s.usdt.empty()) {
        // Interpreters built without --with-dtrace have no notes; they are read through
        // their frames instead (python_frame, docs/probes.md).
        out(
            fmt::format("      -- no file on this machine has USDT {} (python: CPython built without "
                        "--with-dtrace is traced by frame reading, see {})\n",
                        s.usdt, probe::kPythonFrameSpec));
        nowhere.push_back(s.name);
      } else if (resolved == 0) {
        out(fmt::format("      -- no library file on this machine resolves {}\n", s.symbol));
        nowhere.push_back(s.name);
      }
    }
  }
  if (check) {
    // The first names of those resolving nowhere; the rest are marked -- below.
    constexpr std::size_t kNamed = 8;
    std::string named;
    if (!nowhere.empty()) {
      const std::size_t n = std::min(nowhere.size(), kNamed);
      named = fmt::format(
          " ({}{})", fmt::join(nowhere.begin(), nowhere.begin() + static_cast<std::ptrdiff_t>(n), ", "),
          nowhere.size() > n ? fmt::format(" and {} more, marked -- below", nowhere.size() - n) : "");
    }
    std::printf(
        "summary: %d spec(s) in %zu catalog(s); %d resolve in a library file on this machine, %zu "
        "nowhere%s\n",
        specs_total, catalogs.size(), specs_total - static_cast<int>(nowhere.size()), nowhere.size(),
        named.c_str());
    std::printf(
        "marks: ok resolves in that file; == traced there by the other Python probe (USDT or frame "
        "reading); -- does not resolve there\n\n");
    print_interpreters(interpreters);
    std::printf("\n");
    std::fputs(body.c_str(), stdout);
  }
  return 0;
}

int calibrate() {
  const probe::CalibrationOptions options;
  auto costs = probe::calibrate_traps(options);
  if (!costs) {
    print_error(costs.error());
    return 1;
  }
  std::printf(
      "cost of one probe hit on this machine (fastest of %u rounds of %u calls, against the bare call):\n",
      options.rounds, options.calls_per_round);
  const auto row = [](const char* what, double ns) { std::printf("  %-58s %8.3f us\n", what, ns / 1000.0); };
  if (costs->session) {
    row("always-on, counted at entry (return declined)", costs->entry_ns);
    row("always-on, timed call (entry and return)", costs->entry_return_ns);
    row("always-on, entry on a single-stepped first instruction", costs->stepped_entry_ns);
  } else {
    std::printf("  no uprobe sessions on this kernel (Linux 6.13+): always-on runs per call\n");
  }
  row("per call (entry, return and a ring-buffer record)", costs->per_call_ns);
  return 0;
}

}  // namespace

void add_probes_command(CLI::App& app, CommandContext& ctx) {
  auto check = std::make_shared<bool>(false);
  auto calibrate_flag = std::make_shared<bool>(false);
  auto* sub = app.add_subcommand("probes", "list the probe catalogs; --check resolves them on this machine");
  sub->add_option("--config", ctx.config_path, "configuration file (TOML) with user probe specs");
  auto* check_opt =
      sub->add_flag("--check", *check, "show which library files and symbols resolve for each spec");
  sub->add_flag("--calibrate", *calibrate_flag, "measure what one probe hit costs on this machine (root)")
      ->excludes(check_opt);
  sub->final_callback([&ctx, check, calibrate_flag] {
    ctx.exit_code = *calibrate_flag ? calibrate() : list_probes(ctx, *check);
  });
}

}  // namespace eacgm::cli
