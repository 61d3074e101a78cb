# CUDA programs built with nvcc from the machine's CUDA toolkit, linked against the
# shared libcudart so that eacgm's uprobes on libcudart.so see their calls.
include(${CMAKE_CURRENT_LIST_DIR}/cuda_toolkit.cmake)

function(eacgm_cuda_program name src)
  set(out ${CMAKE_BINARY_DIR}/${name})
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${NVCC} -O2 -cudart shared -Xcompiler -Wall -o ${out} ${src} ${ARGN} -ldl
    DEPENDS ${src}
    COMMENT "nvcc ${name}"
    VERBATIM)
  add_custom_target(${name}_prog ALL DEPENDS ${out})
endfunction()

eacgm_cuda_program(eacgm-demo ${CMAKE_SOURCE_DIR}/tests/programs/demo.cu)
