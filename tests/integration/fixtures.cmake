# Programs the integration tests trace: built with nvcc (CUDA runtime, shared libcudart)
# and plain g++ (a late dlopen of a libcudart copy).
eacgm_cuda_program(cuda_calls ${CMAKE_SOURCE_DIR}/tests/programs/cuda_calls.cu)
add_executable(cuda_dlopen ${CMAKE_SOURCE_DIR}/tests/programs/cuda_dlopen.cpp)
target_link_libraries(cuda_dlopen PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(cuda_dlopen PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
