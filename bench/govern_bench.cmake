# libeacgm_hook.so's overhead per launch and per allocation against the fake libcuda
# (eacgm_bench_hook); included from bench/CMakeLists.txt.
find_package(benchmark REQUIRED)
add_executable(eacgm_bench_hook ${CMAKE_SOURCE_DIR}/bench/hook_overhead_bench.cpp)
target_link_libraries(eacgm_bench_hook PRIVATE benchmark::benchmark ${CMAKE_DL_LIBS})
target_include_directories(eacgm_bench_hook PRIVATE ${CMAKE_SOURCE_DIR}/src)  # core/gpu_time_ring.h
target_compile_definitions(eacgm_bench_hook PRIVATE
  EACGM_FAKE_LIBCUDA="${CMAKE_BINARY_DIR}/fake_libcuda/libcuda.so.1"
  EACGM_HOOK_LIB="${CMAKE_BINARY_DIR}/libeacgm_hook.so")
add_dependencies(eacgm_bench_hook eacgm_hook eacgm_fake_libcuda)

# What a timed launch costs the launching thread with GPU time on, by the hook's own count
# (eacgm_bench_gpu_time_launch).
add_executable(eacgm_bench_gpu_time_launch ${CMAKE_SOURCE_DIR}/bench/gpu_time_launch_bench.cpp)
target_link_libraries(eacgm_bench_gpu_time_launch PRIVATE ${CMAKE_DL_LIBS})
target_include_directories(eacgm_bench_gpu_time_launch PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_compile_definitions(eacgm_bench_gpu_time_launch PRIVATE
  EACGM_FAKE_LIBCUDA="${CMAKE_BINARY_DIR}/fake_libcuda/libcuda.so.1"
  EACGM_HOOK_LIB="${CMAKE_BINARY_DIR}/libeacgm_hook.so")
add_dependencies(eacgm_bench_gpu_time_launch eacgm_hook eacgm_fake_libcuda)
