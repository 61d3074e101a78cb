# Probe-stage benchmarks (eacgm_bench_probe): loading a large library's symbol table.
find_package(benchmark REQUIRED)
add_executable(eacgm_bench_probe ${CMAKE_SOURCE_DIR}/bench/elf_symbols_bench.cpp)
target_link_libraries(eacgm_bench_probe PRIVATE eacgm_probe benchmark::benchmark)
set_target_properties(eacgm_bench_probe PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
