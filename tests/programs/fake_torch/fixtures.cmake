# The torch catalog's integration fixture: a library named libtorch_python.so whose op
# bindings are static (local, .symtab-only) functions, and a program that calls them.
set(EACGM_FAKE_TORCH_DIR ${CMAKE_BINARY_DIR}/fake_torch)
add_library(eacgm_fake_torch_python SHARED
  ${CMAKE_SOURCE_DIR}/tests/programs/fake_torch/fake_torch_python.cpp)
# -O1 keeps the bindings as separate functions; no -s, so .symtab (the local symbols) stays.
target_compile_options(eacgm_fake_torch_python PRIVATE -O1 -fPIC -fvisibility=hidden)
set_target_properties(eacgm_fake_torch_python PROPERTIES
  OUTPUT_NAME torch_python
  LIBRARY_OUTPUT_DIRECTORY ${EACGM_FAKE_TORCH_DIR})
add_executable(torch_ops ${CMAKE_SOURCE_DIR}/tests/programs/fake_torch/torch_ops.cpp)
target_link_libraries(torch_ops PRIVATE eacgm_fake_torch_python)
set_target_properties(torch_ops PROPERTIES
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
  BUILD_RPATH ${EACGM_FAKE_TORCH_DIR})

function(eacgm_fake_torch_wire)
  if(TARGET eacgm_integration_tests)
    add_dependencies(eacgm_integration_tests torch_ops)
  endif()
endfunction()
cmake_language(DEFER CALL eacgm_fake_torch_wire)
