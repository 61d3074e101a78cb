// The hook's own threads (the timing thread, the holds' watchdog): started once, detached,
// named, and never given the program's signals. Internal to the hook.
#pragma once

#include <atomic>

namespace eacgm::govern::hook {

// Starts `run` on a detached thread named `name` unless `started` was already set (the
// first caller sets it); false when that caller could not create the thread.
bool start_hook_thread(std::atomic<bool>& started, void* (*run)(void*), const char* name);

}  // namespace eacgm::govern::hook
