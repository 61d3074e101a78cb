/* What a uprobe costs a caller with a large working set: ITERS calls of ws_target() (its
 * first instruction `push %rbp`, emulated by the kernel, as at the probed entries of
 * libcuda), each after
 *   - LINES reads at random places in a buffer of KIB KiB (data working set), and
 *   - CALLS calls of random functions among CODE_KIB KiB of generated code, each 256 bytes
 *     of additions and data-dependent branches (instruction working set: caches, TLB and
 *     branch predictors, like a large dispatcher between two CUDA calls),
 * while THREADS other threads of the process map, touch and unmap 256 KiB in a loop (what
 * an allocator does; a uprobe hit looks the probe up under the address space's lock).
 * Best of 5 rounds, ns per iteration. bench/trap_working_set.sh runs it untraced and with
 * an empty entry uprobe on ws_target.
 * Usage: working_set_loop ITERS KIB LINES [CODE_KIB CALLS [THREADS]] */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

long ws_target(long x);
__asm__(
    ".text\n.globl ws_target\n.type ws_target,@function\nws_target:\n"
    "push %rbp\nlea 1(%rdi),%rax\npop %rbp\nret\n.size ws_target,.-ws_target\n");

enum { kFunctionBytes = 256, kSequences = 64 };

typedef long (*generated_fn)(long);

static uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* One function: mov %rdi,%rax; then units of add %rdi,%rax / test $1,%al / je +1 / nop
 * (a branch that depends on the argument); ret; int3 padding. */
static void emit_function(unsigned char *at) {
  static const unsigned char head[] = {0x48, 0x89, 0xf8};
  static const unsigned char unit[] = {0x48, 0x01, 0xf8, 0xa8, 0x01, 0x74, 0x01, 0x90};
  size_t n = 0;
  memcpy(at, head, sizeof head);
  n += sizeof head;
  while (n + sizeof unit + 1 <= kFunctionBytes) {
    memcpy(at + n, unit, sizeof unit);
    n += sizeof unit;
  }
  at[n++] = 0xc3;
  memset(at + n, 0xcc, kFunctionBytes - n);
}

static generated_fn *generate_code(size_t functions) {
  const size_t bytes = functions * kFunctionBytes;
  unsigned char *code = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  generated_fn *table = malloc(sizeof(generated_fn) * functions);
  if (code == MAP_FAILED || !table) return NULL;
  for (size_t i = 0; i < functions; ++i) emit_function(code + i * kFunctionBytes);
  if (mprotect(code, bytes, PROT_READ | PROT_EXEC) != 0) return NULL;
  for (size_t i = 0; i < functions; ++i) {
    void *entry = code + i * kFunctionBytes;
    memcpy(&table[i], &entry, sizeof entry);
  }
  return table;
}

static atomic_int stop_threads;

static void *map_unmap(void *unused) {
  (void)unused;
  while (!atomic_load_explicit(&stop_threads, memory_order_relaxed)) {
    char *p = mmap(NULL, 256 << 10, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) break;
    p[0] = 1;
    munmap(p, 256 << 10);
  }
  return NULL;
}

static uint32_t *random_indices(int per_call, size_t range, uint32_t seed) {
  uint32_t *at = malloc(sizeof(uint32_t) * (size_t)(per_call > 0 ? per_call : 1) * kSequences);
  if (!at) return NULL;
  for (int i = 0; i < per_call * kSequences; ++i) {
    seed = seed * 1103515245u + 12345u;
    at[i] = (uint32_t)((seed >> 8) % range);
  }
  return at;
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 6 && argc != 7) {
    fprintf(stderr, "usage: %s ITERS KIB LINES [CODE_KIB CALLS [THREADS]]\n", argv[0]);
    return 2;
  }
  const long iters = atol(argv[1]);
  const size_t lines_in_buffer =
      (size_t)atol(argv[2]) * 1024 / 64 > 0 ? (size_t)atol(argv[2]) * 1024 / 64 : 1;
  const int reads = atoi(argv[3]);
  const size_t functions = argc >= 6 && atol(argv[4]) > 0 ? (size_t)atol(argv[4]) * 1024 / kFunctionBytes : 1;
  const int calls = argc >= 6 ? atoi(argv[5]) : 0;
  const int threads = argc == 7 ? atoi(argv[6]) : 0;
  char *buf = aligned_alloc(4096, lines_in_buffer * 64);
  uint32_t *at = random_indices(reads, lines_in_buffer, 12345);
  uint32_t *fn_at = random_indices(calls, functions, 54321);
  generated_fn *fns = generate_code(functions);
  if (!buf || !at || !fn_at || !fns) return 1;
  for (size_t i = 0; i < lines_in_buffer * 64; ++i) buf[i] = (char)i;
  pthread_t busy[64];
  const int n_threads = threads < 64 ? threads : 64;
  for (int t = 0; t < n_threads; ++t)
    if (pthread_create(&busy[t], NULL, map_unmap, NULL) != 0) return 1;
  volatile long sink = 0;
  uint64_t best = UINT64_MAX;
  for (int r = 0; r < 5; ++r) {
    const uint64_t t0 = now_ns();
    for (long i = 0; i < iters; ++i) {
      const uint32_t *p = at + (i % kSequences) * reads;
      long a = 0;
      for (int j = 0; j < reads; ++j) a += buf[(size_t)p[j] * 64];
      const uint32_t *f = fn_at + (i % kSequences) * calls;
      for (int j = 0; j < calls; ++j) a += fns[f[j]](a + j);
      sink += ws_target(a);
    }
    const uint64_t t = now_ns() - t0;
    if (t < best) best = t;
  }
  atomic_store(&stop_threads, 1);
  for (int t = 0; t < n_threads; ++t) pthread_join(busy[t], NULL);
  printf("%.1f\n", (double)best / (double)iters);
  free(fns);
  free(fn_at);
  free(at);
  free(buf);
  return 0;
}
