/* A user library for the calls-in-flight tests: block_wait() sleeps the milliseconds it
 * is given; its index tells a test one call from the others. block_outer() waits in
 * block_wait() (a waiting call inside another). */
#include <time.h>

__attribute__((noinline)) int block_wait(long index, long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0) {
  }
  __asm__ volatile("" ::: "memory");
  return (int)(index & 1);
}

__attribute__((noinline)) int block_outer(long index, long ms) {
  const int r = block_wait(index, ms);
  __asm__ volatile("" ::: "memory");
  return r;
}
