# The history store's size per node-day and writer cost (eacgm_bench_history); included
# from bench/CMakeLists.txt.
add_executable(eacgm_bench_history ${CMAKE_SOURCE_DIR}/bench/history_bench.cpp)
target_link_libraries(eacgm_bench_history PRIVATE eacgm_history)
# A fleet writing into one PostgreSQL database (eacgm_bench_history_fleet, through
# bench/history_fleet.sh, which starts a throwaway server).
add_executable(eacgm_bench_history_fleet ${CMAKE_SOURCE_DIR}/bench/history_fleet_bench.cpp)
target_link_libraries(eacgm_bench_history_fleet PRIVATE eacgm_history)
# The history's reading side on a busy node's store (eacgm_bench_history_read): every
# /api/v1/history/* route through the real server, and `eacgm history`.
add_executable(eacgm_bench_history_read ${CMAKE_SOURCE_DIR}/bench/history_read_bench.cpp)
target_link_libraries(eacgm_bench_history_read PRIVATE eacgm_server eacgm_history)
set_target_properties(eacgm_bench_history_read PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
