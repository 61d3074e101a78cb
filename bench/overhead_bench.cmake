# The overhead benchmark's parts: the tight-loop program and the empty-probe floor.
find_path(CUDA_INCLUDE_DIR cuda_runtime_api.h PATHS ${EACGM_CUDA_INCLUDE_DIRS})
find_library(CUDART_SHARED cudart PATHS ${EACGM_CUDA_LIB_DIRS} NO_DEFAULT_PATH REQUIRED)
add_executable(cuda_loop ${CMAKE_SOURCE_DIR}/bench/programs/cuda_loop.cpp)
target_include_directories(cuda_loop PRIVATE ${CUDA_INCLUDE_DIR})
target_link_libraries(cuda_loop PRIVATE ${CUDART_SHARED} Threads::Threads)
set_target_properties(cuda_loop PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

eacgm_bpf_skeleton(bare ${CMAKE_SOURCE_DIR}/bench/bare.bpf.c)
add_executable(eacgm-bench-bare ${CMAKE_SOURCE_DIR}/bench/bare_probe.cpp)
add_dependencies(eacgm-bench-bare bare_skel)
target_include_directories(eacgm-bench-bare PRIVATE ${CMAKE_BINARY_DIR}/bpf)
target_link_libraries(eacgm-bench-bare PRIVATE eacgm_probe Threads::Threads)
target_link_options(eacgm-bench-bare PRIVATE -static-libstdc++ -static-libgcc)
set_target_properties(eacgm-bench-bare PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# System calls of one process by number (how often it changes its address space).
eacgm_bpf_skeleton(syscall_count ${CMAKE_SOURCE_DIR}/bench/syscall_count.bpf.c)
add_executable(eacgm-bench-syscalls ${CMAKE_SOURCE_DIR}/bench/syscall_count.cpp)
add_dependencies(eacgm-bench-syscalls syscall_count_skel)
target_include_directories(eacgm-bench-syscalls PRIVATE ${CMAKE_BINARY_DIR}/bpf)
target_link_libraries(eacgm-bench-syscalls PRIVATE eacgm_probe)
target_link_options(eacgm-bench-syscalls PRIVATE -static-libstdc++ -static-libgcc)
set_target_properties(eacgm-bench-syscalls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# The host-wait tracer's cost to every system call (bench/host_wait_cost.sh).
add_executable(syscall_loop ${CMAKE_SOURCE_DIR}/bench/programs/syscall_loop.c)
target_compile_options(syscall_loop PRIVATE -O2)

# What a trap costs a caller with a large data or code working set, or with threads that
# map and unmap memory (bench/trap_working_set.sh).
add_executable(working_set_loop ${CMAKE_SOURCE_DIR}/bench/programs/working_set_loop.c)
target_compile_options(working_set_loop PRIVATE -O2)
target_link_libraries(working_set_loop PRIVATE Threads::Threads)
set_target_properties(working_set_loop PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})

# What a CUDA event pair around a launch costs the launching thread, on the driver alone
# (a GPU machine; linked against the stub libcuda like the tests' driver programs).
add_executable(event_pair_cost ${CMAKE_SOURCE_DIR}/bench/programs/event_pair_cost.cpp)
target_include_directories(event_pair_cost PRIVATE ${EACGM_CUDA_INCLUDE_DIRS} ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(event_pair_cost PRIVATE ${EACGM_CUDA_STUB} Threads::Threads)
set_target_properties(event_pair_cost PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
  BUILD_RPATH ${CMAKE_BINARY_DIR}/stub_libcuda)

# What each driver call of a timed launch costs when it runs once every few milliseconds
# (a GPU machine; opens libcuda.so.1 itself).
add_executable(event_call_cost ${CMAKE_SOURCE_DIR}/bench/programs/event_call_cost.c)
target_compile_options(event_call_cost PRIVATE -O2)
target_link_libraries(event_call_cost PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(event_call_cost PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
