// Interpreter discovery for the stack sampler: ELF symbols of the mapped interpreter file,
// placed at their run-time addresses through the process's mappings.
#include "ingest/python_process.h"

#include <fmt/format.h>

#include "probe/elf_symbols.h"
#include "probe/python_stack_layouts.h"

namespace eacgm::ingest {

bool maybe_python_file(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  const std::string_view name = std::string_view(path).substr(slash == std::string::npos ? 0 : slash + 1);
  return name.starts_with("python") || name.starts_with("libpython");
}

const PythonProcessFinder::FileFacts& PythonProcessFinder::facts(const FileMapping& m) {
  auto [it, fresh] = files_.try_emplace(m.open_path);
  FileFacts& f = it->second;
  if (!fresh) return f;
  auto elf = probe::ElfSymbolTable::load(m.open_path);
  if (!elf) return f;  // unreadable: not taken for an interpreter
  const probe::ElfSymbol* runtime = elf->find("_PyRuntime");
  if (runtime == nullptr) return f;  // a launcher (pyenv's python3.12 beside its libpython)
  f.interpreter = true;
  auto layout = probe::python_interpreter_layout(m.path, m.open_path, *elf);
  if (!layout) {
    f.error = layout.error();
    return f;
  }
  f.version = layout->layout->version;
  if (probe::python_stack_layout(f.version) == nullptr) {
    f.error = fmt::format("{}: no stack layout for CPython {}.{}", m.path, f.version.major, f.version.minor);
    return f;
  }
  const probe::ElfSymbol* code_type = elf->find("PyCode_Type");
  auto file = probe::ElfFile::open(m.open_path);
  if (code_type == nullptr || !file || file->segments().empty()) {
    f.error = fmt::format("{}: no PyCode_Type symbol or no loadable segment", m.path);
    return f;
  }
  f.runtime_vaddr = runtime->address;
  f.code_type_vaddr = code_type->address;
  f.first_offset = file->segments().front().offset;
  f.first_vaddr = file->segments().front().vaddr;
  return f;
}

Result<std::optional<PythonProcess>> PythonProcessFinder::find_in(const ProcessMappings& maps) {
  for (const FileMapping& m : maps) {
    if (!maybe_python_file(m.path)) continue;
    const FileFacts& f = facts(m);
    if (!f.interpreter) continue;
    if (!f.error.empty()) return make_error(f.error);
    // The first segment is mapped at file offset (its offset rounded down to a page):
    // the mapping of that offset tells where the file's addresses landed.
    const std::uint64_t page_offset = f.first_offset & ~std::uint64_t{0xfff};
    const FileMapping* base = nullptr;
    for (const FileMapping& other : maps) {
      if (other.path == m.path && other.offset == page_offset) base = &other;
    }
    if (base == nullptr) continue;
    const std::uint64_t bias = base->start - (f.first_vaddr - (f.first_offset - page_offset));
    const auto* stack = probe::python_stack_layout(f.version);
    const auto* frame = probe::python_frame_layout(f.version);
    if (stack == nullptr || frame == nullptr) continue;
    PythonProcess p;
    p.interpreter = m.path;
    p.version = f.version;
    p.proc.runtime = bias + f.runtime_vaddr;
    p.proc.code_type = bias + f.code_type_vaddr;
    p.proc.layout = probe::encode_stack_layout(*stack, *frame);
    return std::optional<PythonProcess>(p);
  }
  return std::optional<PythonProcess>();
}

Result<std::optional<PythonProcess>> PythonProcessFinder::find(std::uint32_t pid) {
  auto maps = read_process_mappings(pid);
  if (!maps) return std::optional<PythonProcess>();  // gone
  return find_in(*maps);
}

}  // namespace eacgm::ingest
