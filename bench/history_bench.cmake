# The history store's size per node-day and writer cost (eacgm_bench_history); included
# from bench/CMakeLists.txt.
add_executable(eacgm_bench_history ${CMAKE_SOURCE_DIR}/bench/history_bench.cpp)
target_link_libraries(eacgm_bench_history PRIVATE eacgm_history)
