# Governance (src/govern): the hook library preloaded into GPU programs, the wire
# protocol, and the scheduler daemon. Its own layer: it uses core (for the scheduler's
# TOML config, and the hook for the GPU-time ring's layout, core/gpu_time_ring.h, the
# loader cache's parser, core/ld_cache.h, the driver copy's name, core/driver_copy_name.h,
# and the host waits' table, core/host_wait_kinds.h) and nothing above it; nothing outside
# govern uses the hook.
#   hookcore/  pure logic the hook runs (tables, limits, ledger, predictor), unit tested
#   protocol/  the versioned binary messages between hook and scheduler
#   hook/      libeacgm_hook.so: exported wrappers and lookup routes
#   sched/     the scheduler (tenants, tokens, usage windows, server, metrics)
set(govern_layer ${CMAKE_BINARY_DIR}/layers/govern)
file(MAKE_DIRECTORY ${govern_layer})
file(CREATE_LINK ${CMAKE_SOURCE_DIR}/src/govern ${govern_layer}/govern SYMBOLIC)

# Code that runs inside the traced program: position independent, no exceptions.
set(EACGM_HOOK_FLAGS -fno-exceptions -fvisibility=hidden -fvisibility-inlines-hidden)

file(GLOB govern_hookcore_srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/govern/hookcore/*.cpp)
add_library(eacgm_govern_hookcore STATIC ${govern_hookcore_srcs})
target_include_directories(eacgm_govern_hookcore PUBLIC ${govern_layer})
target_compile_options(eacgm_govern_hookcore PRIVATE ${EACGM_HOOK_FLAGS})
set_target_properties(eacgm_govern_hookcore PROPERTIES POSITION_INDEPENDENT_CODE ON)

file(GLOB govern_protocol_srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/govern/protocol/*.cpp)
add_library(eacgm_govern_protocol STATIC ${govern_protocol_srcs})
target_include_directories(eacgm_govern_protocol PUBLIC ${govern_layer})
target_compile_options(eacgm_govern_protocol PRIVATE ${EACGM_HOOK_FLAGS})
set_target_properties(eacgm_govern_protocol PROPERTIES POSITION_INDEPENDENT_CODE ON)

# libeacgm_hook.so: self-contained (libstdc++ and libgcc linked in and hidden), so it
# can be carried to a GPU machine and preloaded into any program there. It exports only
# the wrapped driver and NVML functions and dlsym.
file(GLOB govern_hook_srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/govern/hook/*.cpp)
# From core, compiled in with the hook's flags for hook/private_driver.cpp: the loader
# cache's parser (which finds the driver the hook copies), the copy's name and the small
# file read; for hook/wait_times.cpp, which calls block the host.
add_library(eacgm_hook SHARED ${govern_hook_srcs} ${CMAKE_SOURCE_DIR}/src/core/ld_cache.cpp
                              ${CMAKE_SOURCE_DIR}/src/core/driver_copy_name.cpp ${CMAKE_SOURCE_DIR}/src/core/proc_file.cpp
                              ${CMAKE_SOURCE_DIR}/src/core/host_wait_kinds.cpp)
target_include_directories(eacgm_hook PRIVATE ${govern_layer} ${CMAKE_BINARY_DIR}/layers/core ${EACGM_CUDA_INCLUDE_DIRS})
target_compile_options(eacgm_hook PRIVATE ${EACGM_HOOK_FLAGS} -fno-rtti)
target_link_libraries(eacgm_hook PRIVATE eacgm_govern_hookcore eacgm_govern_protocol ${CMAKE_DL_LIBS}
                      Threads::Threads)
target_link_options(eacgm_hook PRIVATE -static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL -Wl,-z,defs)
set_target_properties(eacgm_hook PROPERTIES OUTPUT_NAME eacgm_hook LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

file(GLOB govern_sched_srcs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/govern/sched/*.cpp)
if(govern_sched_srcs)
  add_library(eacgm_govern_sched STATIC ${govern_sched_srcs})
  target_include_directories(eacgm_govern_sched PUBLIC ${govern_layer})
  target_link_libraries(eacgm_govern_sched PUBLIC eacgm_govern_protocol eacgm_govern_hookcore eacgm_core)
  add_executable(eacgm-sched ${CMAKE_SOURCE_DIR}/src/govern/sched_main.cpp)
  target_link_libraries(eacgm-sched PRIVATE eacgm_govern_sched)
  target_link_options(eacgm-sched PRIVATE -static-libstdc++ -static-libgcc)
endif()
