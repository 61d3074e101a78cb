# eacgm_bench_serve: the /metrics render, the /api/v1 documents and the per-tick
# snapshot publication of `eacgm serve` for a large node (bench/serve_bench.cpp).
# bench/serve_scrape.sh and bench/serve_load.sh measure the running daemon.
find_package(benchmark REQUIRED)
add_executable(eacgm_bench_serve ${CMAKE_SOURCE_DIR}/bench/serve_bench.cpp)
target_link_libraries(eacgm_bench_serve PRIVATE eacgm_server eacgm_probe benchmark::benchmark)
set_target_properties(eacgm_bench_serve PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
