// The attacher's resolve step: which specs want a library file, and each wanted spec
// turned into registered probes at file offsets (symbols, USDT sites, interpreter layouts).
#include <fmt/format.h>

#include "probe/always_on.h"
#include "probe/attacher.h"
#include "probe/elf_symbols.h"
#include "probe/library_match.h"
#include "probe/python_layouts.h"
#include "probe/symbol_names.h"
#include "probe/usdt_args.h"
#include "probe/usdt_notes.h"

namespace eacgm::probe {

void Attacher::resolve_usdt(const ProbeSpec& spec, const std::vector<UsdtProbe>& notes,
                            const std::string& path, std::vector<ProbePoint>& entries,
                            const std::function<void(const std::string&)>& fail) {
  const auto colon = spec.usdt.find(':');
  const std::string_view provider = std::string_view(spec.usdt).substr(0, colon);
  const std::string_view name = std::string_view(spec.usdt).substr(colon + 1);
  bool found = false;
  // A probe macro expanded in several places (inlining) has one note per site.
  for (const UsdtProbe& note : notes) {
    if (note.provider != provider || note.name != name) continue;
    found = true;
    auto operands = parse_usdt_operands(note.arguments);
    if (!operands) {
      fail(fmt::format("{} in {}: {}", spec.usdt, path, operands.error()));
      continue;
    }
    // Operand locations differ per build, so each site gets its own resolved spec.
    ProbeSpec resolved = spec;
    bool ok = true;
    for (ArgSpec& a : resolved.args) {
      auto r = resolve_usdt_arg(a, *operands);
      if (!r) {
        fail(fmt::format("{} in {}: {}", spec.usdt, path, r.error()));
        ok = false;
        break;
      }
      a = *r;
    }
    if (!ok) continue;
    ProbeInfo info;
    info.function = spec.name;
    info.symbol = spec.usdt;
    info.library = path;
    info.spec = std::move(resolved);
    auto probe = register_probe(std::move(info), fail);
    if (!probe) continue;
    stats_.resolved_specs.insert(spec.name);
    entries.push_back({note.file_offset, probe->id, note.semaphore_offset});
  }
  if (!found) {
    ++stats_.unresolved;
    stats_.unresolved_in.emplace(spec.name, path);
  }
}

bool Attacher::spec_wants(const ProbeSpec& spec, const std::string& path, const std::string& open_path,
                          std::uint64_t dev, std::uint64_t inode, bool by_symbol) {
  if (spec.until_driver) {
    // Once the driver's probes of its operation are attached, never again.
    if (auto op = driver_operation(spec); op && at_driver_.contains(*op)) return false;
  }
  if (library_matches(spec.library, path)) return true;
  // A runtime linked statically: known by what the file defines, not by its name.
  return by_symbol && !spec.also_where_defined.empty() &&
         defined_.defines(open_path, dev, inode, spec.also_where_defined);
}

Attacher::FilePoints Attacher::resolve_points(const std::string& path, const std::string& open_path,
                                              const std::vector<const ProbeSpec*>& matching,
                                              const ElfSymbolTable& elf,
                                              const std::function<const std::vector<UsdtProbe>&()>& notes,
                                              const std::function<void(const std::string&)>& fail) {
  FilePoints points;
  for (const ProbeSpec* spec : matching) {
    if (!spec->usdt.empty()) {
      const std::size_t before = points.own.entries.size();
      resolve_usdt(*spec, notes(), path, points.own.entries, fail);
      points.gated = points.gated ||
                     (spec->usdt_gate == UsdtGate::kCPythonLineTracing && points.own.entries.size() > before);
      continue;
    }
    // A USDT fallback stands aside where the file has the real probes.
    if (!spec->unless_usdt.empty() && has_usdt_probe(notes(), spec->unless_usdt)) continue;
    resolve_symbols(*spec, path, open_path, elf, fail, points);
  }
  return points;
}

void Attacher::resolve_symbols(const ProbeSpec& matched, const std::string& path,
                               const std::string& open_path, const ElfSymbolTable& elf,
                               const std::function<void(const std::string&)>& fail, FilePoints& points) {
  const ProbeSpec* spec = &matched;
  std::vector<const ElfSymbol*> symbols;
  if (spec->symbol_is_pattern) {
    symbols = elf.match(spec->symbol);
  } else if (const ElfSymbol* s = elf.find(spec->symbol)) {
    symbols.push_back(s);
  } else {
    ++stats_.unresolved;
    stats_.unresolved_in.emplace(spec->name, path);
    return;
  }
  // Offsets that depend on the file: the interpreter's version.
  ProbeSpec laid_out;
  if (spec->layout == ArgLayout::kCPythonFrame) {
    auto interp = python_interpreter_layout(path, open_path, elf);
    if (!interp) {
      if (warned_.insert(interp.error()).second) notice_("warning: not traced: " + interp.error());
      ++stats_.unresolved;
      stats_.unresolved_in.emplace(spec->name, path);
      return;
    }
    laid_out = *spec;
    laid_out.args = python_frame_args(interp->layout);
    spec = &laid_out;
    if (const PythonVersion v = interp->layout->version; v.major == 3 && v.minor >= 11) {
      const std::string note = fmt::format(
          "{}: CPython {}.{} runs Python-to-Python calls inside one eval loop, so its frame probe "
          "sees only the calls entering it from C (import machinery, callbacks), not your "
          "functions; for where the time goes see `eacgm run`'s Python hot spots (sampled stacks)",
          path, v.major, v.minor);
      if (warned_.insert(note).second) notice_("notice: " + note);
    }
  }
  if (!symbols.empty()) stats_.resolved_specs.insert(spec->name);
  for (const ElfSymbol* sym : symbols) {
    ProbeInfo info;
    info.function = spec->symbol_is_pattern ? pattern_probe_name(spec->name_rule, sym->name) : spec->name;
    if (info.function.empty()) continue;
    info.symbol = sym->name;
    info.library = path;
    info.spec = *spec;
    auto probe = register_probe(std::move(info), fail);
    if (!probe) continue;
    const ProbePoint point{sym->file_offset, probe->id};
    const auto op = spec->until_driver ? driver_operation(*spec) : std::nullopt;
    GroupPoints& group = op ? points.stand_ins[*op] : points.own;
    if (probe->counted) {
      (probe->cycled ? points.cycled : group.counted).push_back(point);
      continue;
    }
    group.entries.push_back(point);
    if (spec->with_exit) group.exits.push_back(point);
  }
}

}  // namespace eacgm::probe
