/* Planted slow calls for the anomaly tests and benchmark: N calls of slow_step()
 * (libeacgm_slow), each sleeping about NORMAL_US microseconds (times exp(SIGMA * a
 * standard normal draw) when SIGMA > 0), except that from call FIRST on every EVERY-th
 * call sleeps PLANTED_US (a single slow call), or, when RUN > 1, RUN calls in a row sleep
 * PLANTED_US each (a slow stretch). Prints the planted calls' indices, and a stretch's
 * start and end (CLOCK_REALTIME ns).
 * Usage: slow_calls N NORMAL_US PLANTED_US EVERY FIRST [SIGMA [RUN [SEED]]] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int slow_step(long index, long planted, long sleep_us);

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double normal(void) {
  const double u = (rand() + 1.0) / (RAND_MAX + 2.0);
  const double v = (rand() + 1.0) / (RAND_MAX + 2.0);
  return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: slow_calls N NORMAL_US PLANTED_US EVERY FIRST [SIGMA [RUN [SEED]]]\n");
    return 2;
  }
  const long n = atol(argv[1]), normal_us = atol(argv[2]), planted_us = atol(argv[3]);
  const long every = atol(argv[4]), first = atol(argv[5]);
  const double sigma = argc > 6 ? atof(argv[6]) : 0;
  const long run = argc > 7 ? atol(argv[7]) : 1;
  srand(argc > 8 ? (unsigned)atoi(argv[8]) : 1u);
  long planted_calls = 0;
  for (long i = 0; i < n; ++i) {
    const int planted = every > 0 && i >= first && (i - first) % every < run;
    long us = normal_us;
    if (sigma > 0) us = (long)(normal_us * exp(sigma * normal()));
    if (planted) {
      us = planted_us;
      printf("planted %ld\n", i);
      ++planted_calls;
      if (run > 1 && i == first) printf("stretch_start %lld\n", now_ns());
    }
    slow_step(i, planted, us);
    if (planted && run > 1 && i == first + run - 1) printf("stretch_end %lld\n", now_ns());
  }
  printf("calls %ld planted %ld\n", n, planted_calls);
  return 0;
}
