# The Python API's tests: a recursive library and the program that calls it.
add_library(eacgm_recurse SHARED ${CMAKE_SOURCE_DIR}/tests/programs/recurse_lib.c)
target_compile_options(eacgm_recurse PRIVATE -O1 -fPIC -fno-optimize-sibling-calls -fno-inline)
set_target_properties(eacgm_recurse PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
add_executable(recurse_calls ${CMAKE_SOURCE_DIR}/tests/programs/recurse_calls.c)
target_link_libraries(recurse_calls PRIVATE eacgm_recurse)
set_target_properties(recurse_calls PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
