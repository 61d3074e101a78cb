/* The host-wait tracer's cost to system calls: N getppid() calls and N zero-timeout
 * poll() calls (neither blocks), best of 5 rounds each; prints ns per call.
 * Usage: syscall_loop [N] */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv) {
  const long n = argc > 1 ? atol(argv[1]) : 1000000;
  double best_ppid = 1e30, best_poll = 1e30;
  for (int r = 0; r < 5; ++r) {
    double t0 = now_ns();
    for (long i = 0; i < n; ++i) getppid();
    double t1 = now_ns();
    for (long i = 0; i < n; ++i) poll(NULL, 0, 0);
    double t2 = now_ns();
    if ((t1 - t0) / n < best_ppid) best_ppid = (t1 - t0) / n;
    if ((t2 - t1) / n < best_poll) best_poll = (t2 - t1) / n;
  }
  printf("getppid_ns=%.1f poll0_ns=%.1f\n", best_ppid, best_poll);
  return 0;
}
