/* A recursive function for the Python API's tests: recurse_down(n) calls itself down to
 * 0 and returns n, each call's return after the one it made. */
__attribute__((noinline)) int recurse_down(int n) {
  if (n == 0) return 0;
  int r = recurse_down(n - 1);
  __asm__ volatile("" ::: "memory"); /* not a tail call: this call returns after its callee */
  return r + 1;
}
