# The fleet simulation (bench/fleet/run.sh, BENCHMARKS.md "Fleet simulation"): a busy
# 8-GPU node with 50 pods (fleet_node.cpp) rendered by the daemon's /metrics code and
# served to a real Prometheus as many nodes (eacgm_bench_fleet_metrics), and a fleet's
# history written by the real PostgreSQL store and read by the history dashboard's SQL
# (eacgm_bench_fleet_store). Built with the default target; not tests.
add_library(eacgm_bench_fleet_node STATIC ${CMAKE_SOURCE_DIR}/bench/fleet/fleet_node.cpp)
target_include_directories(eacgm_bench_fleet_node PUBLIC ${CMAKE_SOURCE_DIR}/bench/fleet)
target_link_libraries(eacgm_bench_fleet_node PUBLIC eacgm_server eacgm_probe eacgm_history)
add_executable(eacgm_bench_fleet_metrics ${CMAKE_SOURCE_DIR}/bench/fleet/fleet_metrics.cpp)
target_link_libraries(eacgm_bench_fleet_metrics PRIVATE eacgm_bench_fleet_node)
set_target_properties(eacgm_bench_fleet_metrics PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
add_executable(eacgm_bench_fleet_store ${CMAKE_SOURCE_DIR}/bench/fleet/fleet_store.cpp)
target_link_libraries(eacgm_bench_fleet_store PRIVATE eacgm_bench_fleet_node nlohmann_json::nlohmann_json)
set_target_properties(eacgm_bench_fleet_store PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
add_executable(eacgm_bench_fleet_ship ${CMAKE_SOURCE_DIR}/bench/fleet/fleet_ship.cpp)
target_link_libraries(eacgm_bench_fleet_ship PRIVATE eacgm_bench_fleet_node)
set_target_properties(eacgm_bench_fleet_ship PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
