# Analysis-stage benchmarks: LatencySketch::add and CallSummary::add per event
# (eacgm_bench_analysis), and the whole LiveAnalysis over a recorded training-step
# stream with its memory per key and live allocation (eacgm_bench_live_analysis), the
# Python profile read out at its caps (eacgm_bench_python_profile), the NCCL kernels'
# join to their calls (eacgm_bench_nccl_gpu_join);
# included from bench/CMakeLists.txt.
find_package(benchmark REQUIRED)
add_executable(eacgm_bench_analysis ${CMAKE_SOURCE_DIR}/bench/latency_sketch_bench.cpp)
target_link_libraries(eacgm_bench_analysis PRIVATE eacgm_analysis benchmark::benchmark)
add_executable(eacgm_bench_live_analysis ${CMAKE_SOURCE_DIR}/bench/live_analysis_bench.cpp)
target_link_libraries(eacgm_bench_live_analysis PRIVATE eacgm_analysis eacgm_probe benchmark::benchmark)
add_executable(eacgm_bench_python_profile ${CMAKE_SOURCE_DIR}/bench/python_profile_bench.cpp)
target_link_libraries(eacgm_bench_python_profile PRIVATE eacgm_analysis benchmark::benchmark)
add_executable(eacgm_bench_nccl_gpu_join ${CMAKE_SOURCE_DIR}/bench/nccl_gpu_join_bench.cpp)
target_link_libraries(eacgm_bench_nccl_gpu_join PRIVATE eacgm_analysis eacgm_probe benchmark::benchmark)
