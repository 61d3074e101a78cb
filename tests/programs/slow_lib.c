/* A user library for the anomaly tests: slow_step() sleeps the microseconds it is given;
 * its first two arguments (the call's index and whether it was planted slow) let a test
 * tell the planted calls from the others. */
#include <time.h>

__attribute__((noinline)) int slow_step(long index, long planted, long sleep_us) {
  struct timespec ts = {sleep_us / 1000000, (sleep_us % 1000000) * 1000};
  nanosleep(&ts, 0);
  __asm__ volatile("" ::: "memory");
  return (int)(index + planted) & 1;
}
