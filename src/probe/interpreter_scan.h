// The Python interpreters installed on this machine, for `eacgm probes --check`: pyenv
// versions, conda environments, virtualenvs, the python3 on PATH (through symlinks and
// pyenv's shims) and the system's, each once by real path, with its version and the file
// holding its code. Everything is read from the files; no interpreter is run.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probe/python_layouts.h"

namespace eacgm::probe {

// Where to look. default_interpreter_places() fills it for this machine; tests point it
// at a tree of their own.
struct InterpreterPlaces {
  std::vector<std::string> pyenv_roots;    // each root's versions/*/bin
  std::vector<std::string> conda_roots;    // each root's bin and envs/*/bin
  std::vector<std::string> venv_patterns;  // glob patterns of virtualenv folders (their bin)
  std::vector<std::string> system_dirs;    // python3* directly in these folders
  std::string path;                        // $PATH, where `python3` is looked up
  std::string pyenv_version;               // $PYENV_VERSION: what pyenv's shims run first
  std::string cwd;                         // where a .python-version file is looked for (and above)
  // Where a libpython that an executable names without a path is looked for when its run
  // path and its ../lib do not have it.
  std::vector<std::string> library_dirs;
};

// The user's environment as the scan reads it; the caller (the command line) fills it
// from $HOME, $PYENV_ROOT, $PATH and $PYENV_VERSION ("" for one not set).
struct InterpreterEnvironment {
  std::string home;
  std::string pyenv_root;
  std::string path;
  std::string pyenv_version;
};

// For `env.home`, /root and every /home/* folder: ~/.pyenv (and `env.pyenv_root`), ~/.conda,
// ~/miniconda3, ~/anaconda3, ~/miniforge3, /opt/conda; virtualenvs in ~/.virtualenvs,
// ~/.venv, ~/venv, ~/*/.venv, /opt/*/.venv, /opt/*/venv; /usr/bin and /usr/local/bin.
InterpreterPlaces default_interpreter_places(const InterpreterEnvironment& env);

struct FoundInterpreter {
  std::string path;                   // the executable, symlinks resolved
  std::vector<std::string> found_as;  // "pyenv 3.12.1", "conda /opt/conda", "venv /opt/app/.venv",
                                      // "python3 on PATH", "system", in the order found
  std::optional<PythonVersion> version;
  std::string version_from;  // "file name", "libpython name" or "Py_Version"
  std::string abi_flags;     // "" for release builds; "t" free-threaded, "d" debug, "m" (3.7 and older)
  // The file with the interpreter's code, where its probes go: the executable itself, or
  // the libpython3.X.so it loads (--enable-shared builds); "" when that library is not found.
  std::string code_file;
  std::string problem;  // why code_file is empty
};

// Every interpreter found, pyenv's first, then conda's, virtualenvs', PATH's, the system's.
std::vector<FoundInterpreter> scan_interpreters(const InterpreterPlaces& where);

// The version in an interpreter file name: "python3.12", "python3.13t", "python3.6m",
// "python2.7", "libpython3.12.so.1.0" -> the version and its ABI flags ("t", "m", "").
struct PythonNameVersion {
  PythonVersion version;
  std::string abi_flags;
};
std::optional<PythonNameVersion> python_name_version(const std::string& path);

}  // namespace eacgm::probe
