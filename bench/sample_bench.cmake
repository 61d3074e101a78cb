# eacgm_bench_sample: CPU cost of one NVML sampling pass (bench/sample_pass_bench.cpp),
# against the fake libnvidia-ml by default, or the real one with EACGM_BENCH_REAL_NVML=1.
find_package(benchmark REQUIRED)
if(NOT TARGET eacgm_fake_nvml)
  include(${CMAKE_SOURCE_DIR}/tests/fakes/fake_nvml/fixtures.cmake)
endif()
add_executable(eacgm_bench_sample ${CMAKE_CURRENT_LIST_DIR}/sample_pass_bench.cpp)
target_link_libraries(eacgm_bench_sample PRIVATE eacgm_sample benchmark::benchmark)
target_compile_definitions(eacgm_bench_sample PRIVATE
  EACGM_FAKE_NVML_PATH="${CMAKE_BINARY_DIR}/fake_nvml/libnvidia-ml.so.1")
add_dependencies(eacgm_bench_sample eacgm_fake_nvml)
