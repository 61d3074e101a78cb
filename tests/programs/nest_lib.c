/* A library with an outer function that calls an inner one, like libcudart's
 * cudaLaunchKernel calling libcuda's cuLaunchKernel: the integration tests mark
 * nest_outer `outer` in a user probe config and expect nest_inner's calls made from
 * it, and only those, to be flagged nested. */
__attribute__((noinline)) int nest_inner(int x) {
  __asm__ volatile("" ::: "memory"); /* keep the body: a probe needs a call to see */
  return x * 2;
}

__attribute__((noinline)) int nest_outer(int x) {
  int r = nest_inner(x);
  __asm__ volatile("" ::: "memory");
  return r + 1; /* not a tail call: the outer call's exit comes after the inner's */
}
