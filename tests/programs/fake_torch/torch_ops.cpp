// Calls the fake libtorch_python's op bindings a known number of times: op i is called
// i + 1 times, so every count is distinct. Prints "op count" lines for the test.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

extern "C" int eacgm_fake_torch_count();
extern "C" const char* eacgm_fake_torch_name(int i);
extern "C" long eacgm_fake_torch_call(int i);
extern "C" long eacgm_fake_torch_get_grad();

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 1;
  int n = eacgm_fake_torch_count();
  // Like importing torch, take a moment before the first op: the tracer attaches to
  // libraries when it sees them mapped, which races a program that is done in 1 ms.
  usleep(300 * 1000);
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k <= i; ++k) eacgm_fake_torch_call(i);
    }
    eacgm_fake_torch_get_grad();
  }
  for (int i = 0; i < n; ++i) std::printf("%s %d\n", eacgm_fake_torch_name(i), (i + 1) * rounds);
  return 0;
}
