# The FAKE libcuda.so.1 (tests/fakes/fake_libcuda/fake_libcuda.c): a stand-in for the
# CUDA driver whose allocations succeed, for the memory ledger's integration test, at
# <build>/fake_libcuda/libcuda.so.1. Named as the driver is, so eacgm's cuda_driver
# catalog (library "libcuda.so*") attaches to it. Test programs dlopen it by path.
if(NOT TARGET eacgm_fake_libcuda)
  add_library(eacgm_fake_libcuda SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_libcuda.c)
  # Distinct bodies, and no identical-code folding: each entry point its own address.
  target_compile_options(eacgm_fake_libcuda PRIVATE -O1 -fno-ipa-icf)
  set_target_properties(eacgm_fake_libcuda PROPERTIES
    PREFIX "lib" OUTPUT_NAME "cuda" SUFFIX ".so.1" NO_SONAME ON
    C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fake_libcuda)
  # -Bsymbolic: its entry points call each other directly, as the real driver does, never
  # through an interposed (preloaded) definition.
  target_link_options(eacgm_fake_libcuda PRIVATE -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic)
  set(EACGM_FAKE_LIBCUDA_PATH ${CMAKE_BINARY_DIR}/fake_libcuda/libcuda.so.1)

  function(eacgm_fake_libcuda_attach)
    if(TARGET eacgm_integration_tests)
      add_dependencies(eacgm_integration_tests eacgm_fake_libcuda)
    endif()
  endfunction()
  cmake_language(DEFER CALL eacgm_fake_libcuda_attach)
endif()
