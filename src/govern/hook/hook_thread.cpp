#include "govern/hook/hook_thread.h"

#include <pthread.h>

#include "core/signal_mask.h"

namespace eacgm::govern::hook {

bool start_hook_thread(std::atomic<bool>& started, void* (*run)(void*), const char* name) {
  bool expected = false;
  if (started.load(std::memory_order_relaxed) ||
      !started.compare_exchange_strong(expected, true, std::memory_order_acq_rel))
    return true;
  // The program's signals are never delivered to the hook's threads: they start with all
  // of them blocked.
  const AllSignalsBlocked blocked;
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  const bool made = pthread_create(&thread, &attr, run, nullptr) == 0;
  if (made) pthread_setname_np(thread, name);
  pthread_attr_destroy(&attr);
  return made;
}

}  // namespace eacgm::govern::hook
