/* A user library for the calls-in-flight tests: block_wait() sleeps the milliseconds it
 * is given; its index tells a test one call from the others. */
#include <time.h>

__attribute__((noinline)) int block_wait(long index, long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
  __asm__ volatile("" ::: "memory");
  return (int)(index & 1);
}
