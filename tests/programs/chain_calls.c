/* Test program for pointer-chain captures: chain_visit() gets a struct whose fields sit
 * behind two pointers (outer -> inner -> name), the last call a chain broken by NULL.
 * The struct layouts are x86-64 System V: outer.in at 8, inner.name at 8, inner.count
 * at 16. */
#include <stddef.h>
#include <stdio.h>

struct inner {
  long id;
  const char *name;
  int count;
};

struct outer {
  int tag;
  struct inner *in;
};

__attribute__((noinline)) int chain_visit(const struct outer *o) {
  __asm__ volatile("" ::: "memory");
  return o->in ? o->in->count : -1;
}

int main(void) {
  struct inner a = {1, "alpha", 3};
  struct inner b = {2, "beta", 5};
  struct outer oa = {10, &a};
  struct outer ob = {20, &b};
  struct outer on = {30, NULL};
  /* Touch the strings first: the kernel reads only pages the process has faulted in. */
  printf("names %s %s\n", a.name, b.name);
  int sum = chain_visit(&oa) + chain_visit(&ob) + chain_visit(&on);
  printf("sum=%d\n", sum);
  return 0;
}
