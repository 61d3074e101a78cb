/* The library the churn and probe-control integration tests trace: copied to a fresh
 * path, loaded and unloaded again and again (churn_calls churn), or loaded once and
 * called in phases (churn_calls phases). */
__attribute__((noinline)) int churn_work(int x) {
  __asm__ volatile("" ::: "memory"); /* keep the body: a probe needs a call to see */
  return x + 1;
}
