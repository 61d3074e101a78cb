// The environment variables eacgm's stages honour, read here at the command line's edge
// and handed down as options: the stages below read no environment of their own.
#pragma once

#include <string>

#include "agent/trace_setup.h"
#include "probe/interpreter_scan.h"

namespace eacgm::cli {

// Process-wide settings, once at start: EACGM_LIBBPF_DEBUG (probe::set_libbpf_debug).
void apply_process_environment();

// $PATH (where a traced command is found; unset: agent::kDefaultSearchPath),
// $EACGM_NVML_LIBRARY and the duty cycle's EACGM_DUTY_* into a trace's request.
void read_trace_environment(agent::TraceRequest& request);

// $EACGM_NVML_LIBRARY, or "" (the driver's NVML).
std::string nvml_library_from_environment();

// $HOME, $PYENV_ROOT, $PATH and $PYENV_VERSION, for the interpreter scan.
probe::InterpreterEnvironment interpreter_environment();

// Where eacgm writes files of its own accord (top's captures), never the current
// directory (often a repository's): $XDG_STATE_HOME/eacgm, else $HOME/.local/state/eacgm,
// made (mode 0700) when missing; where neither can be written, $TMPDIR, else /tmp.
std::string state_directory();
// The same from the variables' values (null: unset).
std::string state_directory(const char* xdg_state_home, const char* home, const char* tmpdir);

}  // namespace eacgm::cli
