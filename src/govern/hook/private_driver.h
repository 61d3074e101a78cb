// The private driver (EACGM_PRIVATE_DRIVER, private_driver.cpp): the process runs libcuda
// from a copy under another file name, so the agent's per-file uprobes on libcuda never
// reach it and the hook's exact counts stand in for them.
#pragma once

namespace eacgm::govern::hook {

inline constexpr const char* kPrivateDriverSoname = "libcuda.so.1";

// Loads the copy (making it first if there is none) when EACGM_PRIVATE_DRIVER asks and
// libcuda is not loaded yet; otherwise, or on any failure (one line on stderr), nothing.
// Called once, by the hook's constructor.
void load_private_driver();

// Says on stderr, once, why the copy was not used, if it was asked for and not used.
// Called when the process first reaches the driver (the hook's runtime is made).
void report_private_driver();

// Whether the process runs the copy (it was loaded).
bool private_driver_loaded();

}  // namespace eacgm::govern::hook
