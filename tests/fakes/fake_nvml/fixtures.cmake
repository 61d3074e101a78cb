# The fake libnvidia-ml.so.1 (tests/fakes/fake_nvml/fake_nvml.c): the GPU stand-in for unit,
# integration and benchmark runs, at <build>/fake_nvml/libnvidia-ml.so.1.
if(NOT TARGET eacgm_fake_nvml)
  add_library(eacgm_fake_nvml SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_nvml.c)
  set_target_properties(eacgm_fake_nvml PROPERTIES
    PREFIX "lib" OUTPUT_NAME "nvidia-ml" SUFFIX ".so.1" NO_SONAME ON
    C_VISIBILITY_PRESET hidden
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fake_nvml)
  set(EACGM_FAKE_NVML_PATH ${CMAKE_BINARY_DIR}/fake_nvml/libnvidia-ml.so.1)

  # The test binaries are defined after the fixtures are included: attach the fake to
  # them once the tests directory has been read.
  function(eacgm_fake_nvml_attach)
    foreach(t eacgm_unit_sample eacgm_unit_export eacgm_integration_tests)
      if(TARGET ${t})
        add_dependencies(${t} eacgm_fake_nvml)
      endif()
    endforeach()
  endfunction()
  cmake_language(DEFER CALL eacgm_fake_nvml_attach)
endif()
