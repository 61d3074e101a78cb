# Replay of recorded records through decode (and formatting): records per second.
find_package(benchmark REQUIRED)
add_executable(eacgm_bench_ingest ${CMAKE_SOURCE_DIR}/bench/decode_bench.cpp)
target_link_libraries(eacgm_bench_ingest PRIVATE eacgm_ingest eacgm_export benchmark::benchmark)
set_target_properties(eacgm_bench_ingest PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
# The agent's read of the calls in flight (root: it loads the BPF object).
add_executable(eacgm_bench_inflight ${CMAKE_SOURCE_DIR}/bench/inflight_scan_bench.cpp)
target_link_libraries(eacgm_bench_inflight PRIVATE eacgm_ingest eacgm_analysis benchmark::benchmark)
set_target_properties(eacgm_bench_inflight PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
# Reading one stuck thread's Python stack from its memory (a real python3 child).
add_executable(eacgm_bench_stuck_stack ${CMAKE_SOURCE_DIR}/bench/stuck_stack_bench.cpp)
target_link_libraries(eacgm_bench_stuck_stack PRIVATE eacgm_ingest benchmark::benchmark)
set_target_properties(eacgm_bench_stuck_stack PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
