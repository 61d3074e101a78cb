// Interpreter discovery: folder conventions of pyenv, conda and virtualenvs, pyenv's
// version selection for its shims, and the ELF facts that tell a version and a code file.
#include "probe/interpreter_scan.h"

#include <glob.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "probe/elf_dynamic.h"
#include "probe/elf_symbols.h"
#include "probe/library_scan.h"

namespace eacgm::probe {
namespace {

namespace fs = std::filesystem;

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

std::string base_name(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string real_path(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::canonical(path, ec);
  return ec ? std::string() : p.string();
}

bool executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

bool is_dir(const std::string& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// Folder entries, sorted (a directory lists in no particular order).
std::vector<std::string> entries(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    out.push_back(it->path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> glob_dirs(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(pattern.c_str(), GLOB_ONLYDIR, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  }
  ::globfree(&g);
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t end = s.find(sep, start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// "python", "python3", "python3.12", "python3.13t", "python2.7": the names an interpreter
// goes by in a bin folder ("python3.12-config" and "python3.12-gdb.py" are not).
bool interpreter_name(const std::string& name) {
  if (name.rfind("python", 0) != 0) return false;
  const std::string rest = name.substr(6);
  std::size_t i = 0;
  if (i < rest.size() && is_digit(rest[i])) {
    ++i;
    if (i < rest.size() && rest[i] == '.') {
      ++i;
      if (i == rest.size() || !is_digit(rest[i])) return false;
      while (i < rest.size() && is_digit(rest[i])) ++i;
    }
  }
  while (i < rest.size() && is_lower(rest[i])) ++i;
  return i == rest.size();
}

class Scan {
 public:
  explicit Scan(const InterpreterPlaces& where) : where_(where) {}

  // Adds the interpreter at `path` (any name of it) with a label; scripts, missing and
  // non-executable files are not interpreters.
  void add(const std::string& path, const std::string& label) {
    if (!executable_file(path)) return;
    const std::string real = real_path(path);
    if (real.empty() || !is_elf_file(real)) return;
    // Hard links too (pyenv's python3.7 and python3.7m are one file).
    auto id = file_identity(real);
    if (!id) return;
    auto [it, fresh] = index_.try_emplace(*id, found_.size());
    if (fresh) found_.push_back(describe(real));
    auto& labels = found_[it->second].found_as;
    if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
  }

  void add_bin_dir(const std::string& dir, const std::string& label) {
    for (const auto& p : entries(dir)) {
      if (interpreter_name(base_name(p))) add(p, label);
    }
  }

  void pyenv(const std::string& root) {
    std::vector<std::string> versions = entries(root + "/versions");
    std::stable_sort(versions.begin(), versions.end(), [](const std::string& a, const std::string& b) {
      return version_less(base_name(a), base_name(b));
    });
    for (const auto& v : versions) {
      if (is_dir(v)) add_bin_dir(v + "/bin", "pyenv " + base_name(v));
    }
  }

  // A root's base environment and its envs/*; ~/.conda also lists environments made
  // elsewhere (`conda create -p DIR`) in its environments.txt.
  void conda(const std::string& root) {
    add_bin_dir(root + "/bin", "conda " + root);
    for (const auto& env : entries(root + "/envs")) {
      if (is_dir(env)) add_bin_dir(env + "/bin", "conda env " + env);
    }
    std::ifstream listed(root + "/environments.txt");
    std::string env;
    while (std::getline(listed, env)) {
      if (!env.empty() && env[0] == '/' && is_dir(env)) add_bin_dir(env + "/bin", "conda env " + env);
    }
  }

  void venvs(const std::string& pattern) {
    for (const auto& dir : glob_dirs(pattern)) {
      std::error_code ec;
      if (fs::exists(dir + "/pyvenv.cfg", ec) || is_dir(dir + "/bin"))
        add_bin_dir(dir + "/bin", "venv " + dir);
    }
  }

  void system_dir(const std::string& dir) {
    for (const auto& p : entries(dir)) {
      const std::string name = base_name(p);
      if (name.rfind("python3", 0) == 0 && interpreter_name(name)) add(p, "system");
    }
  }

  // The first python3 on PATH, as execvp would run it; a pyenv shim is followed to the
  // interpreter pyenv would pick.
  void path_python3() {
    const std::vector<std::string> dirs = split(where_.path, ':');
    for (std::size_t i = 0; i < dirs.size(); ++i) {
      const std::string candidate = dirs[i] + "/python3";
      if (!executable_file(candidate)) continue;
      const std::string real = real_path(candidate);
      if (!real.empty() && is_elf_file(real)) {
        add(candidate, "python3 on PATH");
        return;
      }
      if (auto root = pyenv_shim_root(candidate)) {
        follow_shim(*root, dirs, i);
        return;
      }
      return;  // another script: what it runs is not read from it
    }
  }

  std::vector<FoundInterpreter> take() { return std::move(found_); }

 private:
  // pyenv's shims are scripts that `export PYENV_ROOT="..."` and exec `pyenv exec`.
  static std::optional<std::string> pyenv_shim_root(const std::string& shim) {
    std::ifstream in(shim);
    std::string line;
    bool pyenv_exec = false;
    std::optional<std::string> root;
    for (int n = 0; n < 32 && std::getline(in, line); ++n) {
      constexpr std::string_view kExport = "export PYENV_ROOT=";
      if (line.rfind(kExport, 0) == 0) {
        std::string v = line.substr(kExport.size());
        if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
        root = v;
      }
      pyenv_exec = pyenv_exec || line.find("pyenv\" exec") != std::string::npos ||
                   line.find("pyenv exec") != std::string::npos;
    }
    if (!pyenv_exec) return std::nullopt;
    if (!root) root = fs::path(shim).parent_path().parent_path().string();  // <root>/shims/python3
    return root;
  }

  // pyenv's order: $PYENV_VERSION, a .python-version file here or above, <root>/version,
  // else the system's python3 (the next one on PATH).
  std::vector<std::string> pyenv_versions(const std::string& root) const {
    if (!where_.pyenv_version.empty()) return split(where_.pyenv_version, ':');
    for (fs::path dir = where_.cwd; !dir.empty(); dir = dir.parent_path()) {
      std::ifstream in(dir / ".python-version");
      if (in) return words(in);
      if (dir == dir.root_path()) break;
    }
    std::ifstream global(root + "/version");
    if (global) return words(global);
    return {"system"};
  }

  static std::vector<std::string> words(std::istream& in) {
    std::vector<std::string> out;
    std::string w;
    while (in >> w) {
      if (w[0] != '#') out.push_back(w);
    }
    return out.empty() ? std::vector<std::string>{"system"} : out;
  }

  // A version name, or a prefix of installed ones ("3.12" runs the newest 3.12.x).
  static std::string installed_version(const std::string& root, const std::string& name) {
    if (is_dir(root + "/versions/" + name)) return name;
    std::string best;
    for (const auto& v : entries(root + "/versions")) {
      const std::string n = base_name(v);
      if (n.rfind(name + ".", 0) == 0 && (best.empty() || version_less(best, n))) best = n;
    }
    return best;
  }

  static bool version_less(const std::string& a, const std::string& b) {
    std::vector<std::string> pa = split(a, '.'), pb = split(b, '.');
    for (std::size_t i = 0; i < std::min(pa.size(), pb.size()); ++i) {
      const int x = std::atoi(pa[i].c_str()), y = std::atoi(pb[i].c_str());
      if (x != y) return x < y;
    }
    return pa.size() < pb.size();
  }

  void follow_shim(const std::string& root, const std::vector<std::string>& dirs, std::size_t shim_dir) {
    for (const auto& v : pyenv_versions(root)) {
      if (v == "system") {
        for (std::size_t j = shim_dir + 1; j < dirs.size(); ++j) {
          const std::string candidate = dirs[j] + "/python3";
          const std::string real = real_path(candidate);
          if (executable_file(candidate) && !real.empty() && is_elf_file(real)) {
            add(candidate, "python3 on PATH (pyenv shim: system)");
            return;
          }
        }
        continue;
      }
      const std::string installed = installed_version(root, v);
      std::string exe = root;
      exe.append("/versions/").append(installed).append("/bin/python3");
      if (!installed.empty() && executable_file(exe)) {
        add(exe, "python3 on PATH (pyenv shim: " + installed + ")");
        return;
      }
    }
  }

  FoundInterpreter describe(const std::string& real) const {
    FoundInterpreter f;
    f.path = real;
    if (auto nv = python_name_version(real)) {
      f.version = nv->version;
      f.abi_flags = nv->abi_flags;
      f.version_from = "file name";
    }
    auto dynamic = read_elf_dynamic(real);
    std::string libpython;
    if (dynamic) {
      for (const auto& n : dynamic->needed) {
        if (n.rfind("libpython", 0) == 0) libpython = n;
      }
    }
    if (libpython.empty()) {
      f.code_file = real;  // the interpreter is linked into the executable
    } else {
      f.code_file = find_library(libpython, *dynamic, fs::path(real).parent_path().string());
      if (f.code_file.empty()) f.problem = libpython + " (which it loads) not found";
      if (!f.version) {
        if (auto nv = python_name_version(libpython)) {
          f.version = nv->version;
          f.abi_flags = nv->abi_flags;
          f.version_from = "libpython name";
        }
      }
    }
    if (!f.version && !f.code_file.empty()) {
      if (auto elf = ElfSymbolTable::load(f.code_file)) {
        if (auto v = python_version_constant(f.code_file, *elf)) {
          f.version = *v;
          f.version_from = "Py_Version";
        }
      }
    }
    return f;
  }

  // As the loader would: the run path, then (pyenv, conda, python.org) the executable's
  // ../lib, then the system's library folders.
  std::string find_library(const std::string& name, const ElfDynamic& dynamic,
                           const std::string& origin) const {
    std::vector<std::string> dirs = run_path_dirs(dynamic, origin);
    dirs.push_back(origin + "/../lib");
    dirs.insert(dirs.end(), where_.library_dirs.begin(), where_.library_dirs.end());
    for (const auto& d : dirs) {
      std::error_code ec;
      std::string candidate = d;
      candidate.append("/").append(name);
      if (fs::is_regular_file(candidate, ec)) return real_path(candidate);
    }
    return "";
  }

  const InterpreterPlaces& where_;
  std::vector<FoundInterpreter> found_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> index_;  // by (dev, inode)
};

std::vector<std::string> home_dirs(const std::string& home) {
  std::vector<std::string> homes;
  auto add = [&](const std::string& h) {
    if (!h.empty() && is_dir(h) && std::find(homes.begin(), homes.end(), h) == homes.end())
      homes.push_back(h);
  };
  add(home);
  if (const passwd* pw = ::getpwuid(::getuid())) add(pw->pw_dir);
  add("/root");
  for (const auto& h : entries("/home")) add(h);
  return homes;
}

}  // namespace

std::optional<PythonNameVersion> python_name_version(const std::string& path) {
  const std::string name = base_name(path);
  std::size_t at = name.find("python");
  if (at == std::string::npos) return std::nullopt;
  at += 6;
  if (at + 2 >= name.size() || !is_digit(name[at]) || name[at + 1] != '.' || !is_digit(name[at + 2])) {
    return std::nullopt;
  }
  PythonNameVersion out;
  out.version.major = name[at] - '0';
  int minor = 0;
  std::size_t i = at + 2;
  for (; i < name.size() && is_digit(name[i]) && i < at + 5; ++i) minor = minor * 10 + (name[i] - '0');
  out.version.minor = minor;
  while (i < name.size() && is_lower(name[i])) out.abi_flags.push_back(name[i++]);
  if (i < name.size() && name[i] != '.') return std::nullopt;  // "python3.12-config", another word
  return out;
}

InterpreterPlaces default_interpreter_places(const InterpreterEnvironment& env) {
  InterpreterPlaces w;
  auto add_unique = [](std::vector<std::string>& v, const std::string& s) {
    if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
  };
  if (!env.pyenv_root.empty()) add_unique(w.pyenv_roots, env.pyenv_root);
  for (const auto& home : home_dirs(env.home)) {
    add_unique(w.pyenv_roots, home + "/.pyenv");
    for (const char* c : {"/.conda", "/miniconda3", "/anaconda3", "/miniforge3"})
      add_unique(w.conda_roots, home + c);
    for (const char* v : {"/.virtualenvs/*", "/.venv", "/venv", "/*/.venv"})
      add_unique(w.venv_patterns, home + v);
  }
  add_unique(w.conda_roots, "/opt/conda");
  w.venv_patterns.insert(w.venv_patterns.end(), {"/opt/*/.venv", "/opt/*/venv"});
  w.system_dirs = {"/usr/bin", "/usr/local/bin"};
  w.library_dirs = {"/usr/local/lib", "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib",
                    "/lib"};
  w.path = env.path;
  w.pyenv_version = env.pyenv_version;
  std::error_code ec;
  w.cwd = fs::current_path(ec).string();
  return w;
}

std::vector<FoundInterpreter> scan_interpreters(const InterpreterPlaces& where) {
  Scan scan(where);
  for (const auto& root : where.pyenv_roots) scan.pyenv(root);
  for (const auto& root : where.conda_roots) scan.conda(root);
  for (const auto& pattern : where.venv_patterns) scan.venvs(pattern);
  scan.path_python3();
  for (const auto& dir : where.system_dirs) scan.system_dir(dir);
  return scan.take();
}

}  // namespace eacgm::probe
