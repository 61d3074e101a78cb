# Analysis-stage benchmarks (eacgm_bench_analysis): LatencySketch::add and
# CallSummary::add per event; included from bench/CMakeLists.txt.
find_package(benchmark REQUIRED)
add_executable(eacgm_bench_analysis ${CMAKE_SOURCE_DIR}/bench/latency_sketch_bench.cpp)
target_link_libraries(eacgm_bench_analysis PRIVATE eacgm_analysis benchmark::benchmark)
