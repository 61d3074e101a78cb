# Programs the integration tests trace: built with nvcc (CUDA runtime, shared libcudart)
# and plain g++ (a late dlopen of a libcudart copy, the stub libcuda, a nesting library).
eacgm_cuda_program(cuda_calls ${CMAKE_SOURCE_DIR}/tests/programs/cuda_calls.cu)
add_executable(cuda_dlopen ${CMAKE_SOURCE_DIR}/tests/programs/cuda_dlopen.cpp)
target_link_libraries(cuda_dlopen PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(cuda_dlopen PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# NCCL test program: plain g++ against the machine's libnccl.so.2 (shipped with the CUDA
# toolkit here); the integration test skips itself where NCCL is absent.
find_path(NCCL_INCLUDE_DIR nccl.h PATHS ${EACGM_CUDA_INCLUDE_DIRS})
find_library(NCCL_LIBRARY NAMES libnccl.so.2 nccl PATHS ${EACGM_CUDA_LIB_DIRS})
if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
  add_executable(nccl_calls ${CMAKE_SOURCE_DIR}/tests/programs/nccl_calls.cpp)
  target_include_directories(nccl_calls PRIVATE ${NCCL_INCLUDE_DIR})
  target_link_libraries(nccl_calls PRIVATE ${NCCL_LIBRARY})
  get_filename_component(nccl_lib_dir ${NCCL_LIBRARY} DIRECTORY)
  set_target_properties(nccl_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
                        BUILD_RPATH ${nccl_lib_dir})
else()
  message(STATUS "nccl.h or libnccl not found: NCCL integration tests will be skipped")
endif()

# The runtime calls beyond cuda_calls (async/host memory, memsets, 2D and peer copies,
# streams, events, graphs, cudaLaunchKernelExC).
eacgm_cuda_program(cuda_more ${CMAKE_SOURCE_DIR}/tests/programs/cuda_more.cu)

# The driver API against the toolkit's stub libcuda (no GPU needed: every call returns
# CUDA_ERROR_STUB_LIBRARY after entering libcuda). The stub's soname is libcuda.so.1,
# which the stubs directory lacks, so a link of that name in the build tree and the
# program's RUNPATH let the loader find it; eacgm finds it through /proc/<pid>/maps.
find_library(EACGM_CUDA_STUB NAMES cuda
  PATHS ${EACGM_CUDA_ROOT}/lib64/stubs ${EACGM_CUDA_ROOT}/lib/stubs
        ${EACGM_CUDA_ROOT}/targets/x86_64-linux/lib/stubs /usr/lib/x86_64-linux-gnu/stubs
  NO_DEFAULT_PATH REQUIRED)
set(EACGM_STUB_DIR ${CMAKE_BINARY_DIR}/stub_libcuda)
file(MAKE_DIRECTORY ${EACGM_STUB_DIR})
file(CREATE_LINK ${EACGM_CUDA_STUB} ${EACGM_STUB_DIR}/libcuda.so.1 SYMBOLIC)
add_executable(cuda_driver_calls ${CMAKE_SOURCE_DIR}/tests/programs/cuda_driver_calls.cpp)
target_include_directories(cuda_driver_calls PRIVATE ${EACGM_CUDA_INCLUDE_DIRS})
target_link_libraries(cuda_driver_calls PRIVATE ${EACGM_CUDA_STUB})
set_target_properties(cuda_driver_calls PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
  BUILD_RPATH ${EACGM_STUB_DIR})

# Always-on counts: a multi-threaded driver-API loop on the stub libcuda.
add_executable(driver_loop ${CMAKE_SOURCE_DIR}/tests/programs/driver_loop.cpp)
target_include_directories(driver_loop PRIVATE ${EACGM_CUDA_INCLUDE_DIRS})
target_link_libraries(driver_loop PRIVATE ${EACGM_CUDA_STUB} Threads::Threads)
set_target_properties(driver_loop PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
  BUILD_RPATH ${EACGM_STUB_DIR})

# On-demand captures: a driver-API loop that logs each of its calls.
add_executable(capture_calls ${CMAKE_SOURCE_DIR}/tests/programs/capture_calls.cpp)
target_include_directories(capture_calls PRIVATE ${EACGM_CUDA_INCLUDE_DIRS})
target_link_libraries(capture_calls PRIVATE ${EACGM_CUDA_STUB})
set_target_properties(capture_calls PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
  BUILD_RPATH ${EACGM_STUB_DIR})

# Nesting through a user probe config: nest_outer calls nest_inner in libeacgm_nest.
add_library(eacgm_nest SHARED ${CMAKE_SOURCE_DIR}/tests/programs/nest_lib.c)
target_compile_options(eacgm_nest PRIVATE -O2 -fPIC)
set_target_properties(eacgm_nest PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
add_executable(nest_calls ${CMAKE_SOURCE_DIR}/tests/programs/nest_calls.c)
target_link_libraries(nest_calls PRIVATE eacgm_nest)
set_target_properties(nest_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# Pointer chains through a user probe config: chain_visit's argument leads to a string
# through two pointers.
add_executable(chain_calls ${CMAKE_SOURCE_DIR}/tests/programs/chain_calls.c)
target_compile_options(chain_calls PRIVATE -O2)
set_target_properties(chain_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# Run-time probe control and library churn: churn_calls dlopens libeacgm_churn (or
# fresh copies of it) by path; the tests trace churn_work through a user spec.
add_library(eacgm_churn SHARED ${CMAKE_SOURCE_DIR}/tests/programs/churn_lib.c)
target_compile_options(eacgm_churn PRIVATE -O2 -fPIC)
set_target_properties(eacgm_churn PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
add_executable(churn_calls ${CMAKE_SOURCE_DIR}/tests/programs/churn_calls.c)
target_compile_options(churn_calls PRIVATE -O2)
target_link_libraries(churn_calls PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(churn_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

function(eacgm_integration_fixtures_wire)
  if(TARGET eacgm_integration_tests)
    add_dependencies(eacgm_integration_tests cuda_more_prog cuda_driver_calls driver_loop capture_calls nest_calls chain_calls
                     churn_calls eacgm_churn)
  endif()
endfunction()
cmake_language(DEFER CALL eacgm_integration_fixtures_wire)

# The memory ledger's program: dlopens the FAKE libcuda (tests/fakes/fake_libcuda) by
# path and leaks known allocations through the driver API.
add_executable(memory_leaks ${CMAKE_SOURCE_DIR}/tests/programs/memory_leaks.c)
target_compile_options(memory_leaks PRIVATE -O2)
target_link_libraries(memory_leaks PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(memory_leaks PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
function(eacgm_memory_leaks_wire)
  if(TARGET eacgm_integration_tests)
    add_dependencies(eacgm_integration_tests memory_leaks)
  endif()
endfunction()
cmake_language(DEFER CALL eacgm_memory_leaks_wire)

# GPU work, CUDA graphs and long kernel names: graph_calls dlopens the FAKE libcuda
# (tests/fakes/fake_libcuda) by path and captures, instantiates and launches a graph.
add_executable(graph_calls ${CMAKE_SOURCE_DIR}/tests/programs/graph_calls.c)
target_compile_options(graph_calls PRIVATE -O2)
target_link_libraries(graph_calls PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(graph_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# GPU time through the hook: gpu_time_calls dlopens the FAKE libcuda by path and launches
# kernels, NCCL-named kernels and a graph, with one capture between them.
add_executable(gpu_time_calls ${CMAKE_SOURCE_DIR}/tests/programs/gpu_time_calls.c)
target_compile_options(gpu_time_calls PRIVATE -O2)
target_link_libraries(gpu_time_calls PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(gpu_time_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
add_executable(gpu_time_steps ${CMAKE_SOURCE_DIR}/tests/programs/gpu_time_steps.c)
target_compile_options(gpu_time_steps PRIVATE -O2)
target_link_libraries(gpu_time_steps PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(gpu_time_steps PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
# The hook's pool of events: gpu_time_events reads the FAKE libcuda's count of the events
# each thread made, and its ring's header.
add_executable(gpu_time_events ${CMAKE_SOURCE_DIR}/tests/programs/gpu_time_events.cpp)
target_compile_options(gpu_time_events PRIVATE -O2)
target_include_directories(gpu_time_events PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(gpu_time_events PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(gpu_time_events PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# Static CUDA runtimes (nvcc's default, -cudart static): a program that exits right after
# its launches, and a shared library with the runtime linked in that issues memsets and
# copies through it and through the driver (the FAKE libcuda).
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/static_runtime
  COMMAND ${NVCC} -O2 -Xcompiler -Wall -o ${CMAKE_BINARY_DIR}/static_runtime
          ${CMAKE_SOURCE_DIR}/tests/programs/static_runtime.cu
  DEPENDS ${CMAKE_SOURCE_DIR}/tests/programs/static_runtime.cu
  COMMENT "nvcc static_runtime (static cudart)"
  VERBATIM)
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/libeacgm_static_rt.so
  COMMAND ${NVCC} -O2 -shared -cudart static -Xcompiler -fPIC,-Wall -o ${CMAKE_BINARY_DIR}/libeacgm_static_rt.so
          ${CMAKE_SOURCE_DIR}/tests/programs/static_rt_lib.cu -ldl
  DEPENDS ${CMAKE_SOURCE_DIR}/tests/programs/static_rt_lib.cu
  COMMENT "nvcc libeacgm_static_rt.so (static cudart in a shared library)"
  VERBATIM)
add_custom_target(static_runtime_progs ALL
  DEPENDS ${CMAKE_BINARY_DIR}/static_runtime ${CMAKE_BINARY_DIR}/libeacgm_static_rt.so)
add_executable(static_rt_user ${CMAKE_SOURCE_DIR}/tests/programs/static_rt_user.c)
target_link_libraries(static_rt_user PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(static_rt_user PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
function(eacgm_fidelity_wire)
  if(TARGET eacgm_integration_tests)
    add_dependencies(eacgm_integration_tests graph_calls static_runtime_progs static_rt_user eacgm_fake_libcuda)
  endif()
endfunction()
cmake_language(DEFER CALL eacgm_fidelity_wire)

# libeacgm_hook.so's test program: gets the FAKE libcuda's functions by every lookup
# route (govern_calls) or by linking to it (govern_calls_linked).
add_executable(govern_calls ${CMAKE_SOURCE_DIR}/tests/programs/govern_calls.cpp)
target_include_directories(govern_calls PRIVATE ${EACGM_CUDA_INCLUDE_DIRS})
target_link_libraries(govern_calls PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
set_target_properties(govern_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
add_executable(govern_calls_linked ${CMAKE_SOURCE_DIR}/tests/programs/govern_calls.cpp)
target_include_directories(govern_calls_linked PRIVATE ${EACGM_CUDA_INCLUDE_DIRS})
target_compile_definitions(govern_calls_linked PRIVATE GOVERN_LINKED)
target_link_libraries(govern_calls_linked PRIVATE eacgm_fake_libcuda ${CMAKE_DL_LIBS} Threads::Threads)
set_target_properties(govern_calls_linked PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
function(eacgm_govern_calls_wire)
  if(TARGET eacgm_integration_tests)
    add_dependencies(eacgm_integration_tests govern_calls govern_calls_linked eacgm_hook eacgm_fake_libcuda
                     eacgm_fake_nvml)
    if(TARGET eacgm-sched)
      add_dependencies(eacgm_integration_tests eacgm-sched)
    endif()
  endif()
endfunction()
cmake_language(DEFER CALL eacgm_govern_calls_wire)

# Anomalies: slow_calls calls slow_step() in libeacgm_slow, traced by a user probe; some
# calls are planted slow.
add_library(eacgm_slow SHARED ${CMAKE_SOURCE_DIR}/tests/programs/slow_lib.c)
target_compile_options(eacgm_slow PRIVATE -O2 -fPIC)
set_target_properties(eacgm_slow PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
add_executable(slow_calls ${CMAKE_SOURCE_DIR}/tests/programs/slow_calls.c)
target_compile_options(slow_calls PRIVATE -O2)
target_link_libraries(slow_calls PRIVATE eacgm_slow m)
set_target_properties(slow_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
                                            BUILD_RPATH ${CMAKE_BINARY_DIR})
function(eacgm_slow_calls_wire)
  if(TARGET eacgm_integration_tests)
    add_dependencies(eacgm_integration_tests slow_calls)
  endif()
endfunction()
cmake_language(DEFER CALL eacgm_slow_calls_wire)
# Host waits: host_waits blocks for known times in a futex wait and a poll, and (given
# the FAKE libcuda's path) in one synchronizing call of each kind.
add_executable(host_waits ${CMAKE_SOURCE_DIR}/tests/programs/host_waits.c)
target_compile_options(host_waits PRIVATE -O2)
target_link_libraries(host_waits PRIVATE ${CMAKE_DL_LIBS} Threads::Threads)
set_target_properties(host_waits PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
function(eacgm_host_waits_wire)
  if(TARGET eacgm_integration_tests)
    add_dependencies(eacgm_integration_tests host_waits eacgm_fake_libcuda)
  endif()
endfunction()
cmake_language(DEFER CALL eacgm_host_waits_wire)
# Calls in flight: block_calls calls block_wait() in libeacgm_block (a user probe with
# `waits = true`), a few short calls and one long one, or waits in the FAKE libcuda.
add_library(eacgm_block SHARED ${CMAKE_SOURCE_DIR}/tests/programs/block_lib.c)
target_compile_options(eacgm_block PRIVATE -O2 -fPIC)
set_target_properties(eacgm_block PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
add_executable(block_calls ${CMAKE_SOURCE_DIR}/tests/programs/block_calls.c)
target_compile_options(block_calls PRIVATE -O2)
target_link_libraries(block_calls PRIVATE eacgm_block ${CMAKE_DL_LIBS} Threads::Threads)
set_target_properties(block_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
                                             BUILD_RPATH ${CMAKE_BINARY_DIR})
function(eacgm_block_calls_wire)
  if(TARGET eacgm_integration_tests)
    add_dependencies(eacgm_integration_tests block_calls eacgm_fake_libcuda)
  endif()
endfunction()
cmake_language(DEFER CALL eacgm_block_calls_wire)
