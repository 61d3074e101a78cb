/* Test program for the nesting integration test: 3 calls of nest_outer (each calling
 * nest_inner once) and 2 direct calls of nest_inner, in a known order.
 * Usage: nest_calls --wait-file PATH */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int nest_outer(int x);
int nest_inner(int x);

int main(int argc, char** argv) {
  const char* wait_file = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--wait-file") && i + 1 < argc) wait_file = argv[++i];
  }
  if (wait_file) {
    struct stat st;
    printf("ready %d\n", getpid());
    fflush(stdout);
    while (stat(wait_file, &st) != 0) usleep(2000);
  }
  int sum = 0;
  sum += nest_outer(1);  /* outer(1) -> inner(1) nested */
  sum += nest_inner(10); /* direct */
  sum += nest_outer(2);
  sum += nest_outer(3);
  sum += nest_inner(20); /* direct */
  printf("sum=%d\n", sum);
  return 0;
}
