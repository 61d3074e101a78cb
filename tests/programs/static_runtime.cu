// Test program built with nvcc's defaults (the CUDA runtime linked statically): two
// launches of a kernel whose mangled name is longer than one record string area, then
// an immediate exit, so its records are read after the process is gone. Without a GPU
// the launches fail; they are traced and named all the same. Prints "NAME ret=N".
#include <cstdio>

namespace fidelity_static_runtime_test {
template <typename T, int N>
__global__ void kernel_with_a_rather_long_name_for_testing(T* out, int n) {
  if (out != nullptr && n > N) out[0] = T(n);
}
}  // namespace fidelity_static_runtime_test

int main() {
  for (int i = 0; i < 2; ++i) {
    fidelity_static_runtime_test::kernel_with_a_rather_long_name_for_testing<float, 4><<<2, 32>>>(nullptr, i);
    std::printf("cudaLaunchKernel ret=%d\n", static_cast<int>(cudaGetLastError()));
  }
  return 0;
}
