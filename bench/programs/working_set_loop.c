/* What a uprobe costs a caller with a large data working set: ITERS calls of
 * ws_target() (its first instruction `push %rbp`, emulated by the kernel, as at the
 * probed entries of libcuda), each after LINES reads at random places in a buffer of KIB
 * KiB; best of 5 rounds, ns per iteration. bench/trap_working_set.sh runs it untraced and
 * with an empty entry uprobe on ws_target.
 * Usage: working_set_loop ITERS KIB LINES */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

long ws_target(long x);
__asm__(
    ".text\n.globl ws_target\n.type ws_target,@function\nws_target:\n"
    "push %rbp\nlea 1(%rdi),%rax\npop %rbp\nret\n.size ws_target,.-ws_target\n");

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s ITERS KIB LINES\n", argv[0]);
    return 2;
  }
  const long iters = atol(argv[1]);
  const size_t lines_in_buffer =
      (size_t)atol(argv[2]) * 1024 / 64 > 0 ? (size_t)atol(argv[2]) * 1024 / 64 : 1;
  const int reads = atoi(argv[3]);
  char *buf = aligned_alloc(4096, lines_in_buffer * 64);
  uint32_t *at = malloc(sizeof(uint32_t) * (size_t)(reads > 0 ? reads : 1) * 64);
  if (!buf || !at) return 1;
  for (size_t i = 0; i < lines_in_buffer * 64; ++i) buf[i] = (char)i;
  uint32_t seed = 12345;
  for (int i = 0; i < reads * 64; ++i) {
    seed = seed * 1103515245u + 12345u;
    at[i] = (uint32_t)((seed >> 8) % lines_in_buffer);
  }
  volatile long sink = 0;
  uint64_t best = UINT64_MAX;
  for (int r = 0; r < 5; ++r) {
    const uint64_t t0 = now_ns();
    for (long i = 0; i < iters; ++i) {
      const uint32_t *p = at + (i % 64) * reads;
      long a = 0;
      for (int j = 0; j < reads; ++j) a += buf[(size_t)p[j] * 64];
      sink += ws_target(a);
    }
    const uint64_t t = now_ns() - t0;
    if (t < best) best = t;
  }
  printf("%.1f\n", (double)best / (double)iters);
  free(at);
  free(buf);
  return 0;
}
