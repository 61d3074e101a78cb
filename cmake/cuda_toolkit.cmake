# The machine's CUDA toolkit: nvcc and the directory it belongs to (EACGM_CUDA_ROOT),
# whatever PATH holds. nvcc may be a wrapper script (/usr/local/bin/nvcc exec'ing the
# real one), so the root comes from nvcc's own TOP, not from where nvcc was found.
find_program(NVCC nvcc PATHS /usr/local/cuda/bin NO_DEFAULT_PATH)
find_program(NVCC nvcc PATHS /usr/bin)
if(NOT NVCC)
  message(FATAL_ERROR "nvcc not found: run scripts/setup.sh (installs the CUDA toolkit) or put nvcc on PATH")
endif()

execute_process(COMMAND ${NVCC} --dryrun -c -x cu /dev/null -o /dev/null
  OUTPUT_VARIABLE nvcc_dryrun ERROR_VARIABLE nvcc_dryrun RESULT_VARIABLE nvcc_rc)
string(REGEX MATCH "TOP=([^\n]*)" nvcc_top "${nvcc_dryrun}")
if(nvcc_top)
  get_filename_component(EACGM_CUDA_ROOT "${CMAKE_MATCH_1}" REALPATH)
else()
  get_filename_component(nvcc_real ${NVCC} REALPATH)
  get_filename_component(EACGM_CUDA_ROOT ${nvcc_real} DIRECTORY)
  get_filename_component(EACGM_CUDA_ROOT ${EACGM_CUDA_ROOT} DIRECTORY)
endif()

# Debian's toolkit puts headers and libraries in the system directories.
set(EACGM_CUDA_INCLUDE_DIRS ${EACGM_CUDA_ROOT}/include ${EACGM_CUDA_ROOT}/targets/x86_64-linux/include /usr/include)
set(EACGM_CUDA_LIB_DIRS ${EACGM_CUDA_ROOT}/lib64 ${EACGM_CUDA_ROOT}/lib ${EACGM_CUDA_ROOT}/targets/x86_64-linux/lib /usr/lib/x86_64-linux-gnu)
message(STATUS "CUDA toolkit: ${EACGM_CUDA_ROOT} (nvcc ${NVCC})")
