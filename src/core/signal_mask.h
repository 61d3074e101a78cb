// Blocks every signal in the calling thread while in scope, so that threads started
// meanwhile inherit a full mask and signals go to the program's own threads.
#pragma once

#include <pthread.h>
#include <signal.h>

namespace eacgm {

class AllSignalsBlocked {
 public:
  AllSignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old_);
  }
  ~AllSignalsBlocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  AllSignalsBlocked(const AllSignalsBlocked&) = delete;
  AllSignalsBlocked& operator=(const AllSignalsBlocked&) = delete;

 private:
  sigset_t old_{};
};

}  // namespace eacgm
