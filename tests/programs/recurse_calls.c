/* Calls recurse_down(3) twice (libeacgm_recurse), after --wait-file PATH exists. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int recurse_down(int n);

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
  int sum = recurse_down(3) + recurse_down(3);
  printf("sum=%d\n", sum);
  return 0;
}
