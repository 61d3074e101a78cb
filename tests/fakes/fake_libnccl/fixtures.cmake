# The FAKE libnccl.so.2 (tests/fakes/fake_libnccl/fake_libnccl.c): a stand-in for NCCL whose
# communicators are made without a GPU, at <build>/fake_libnccl/libnccl.so.2, named as NCCL
# is so the nccl catalog (library "libnccl.so*") attaches to it; and nccl_ranks, the ranks
# of one communicator as processes linked to it (tests/programs/nccl_ranks.c).
if(NOT TARGET eacgm_fake_libnccl)
  # -fno-ipa-icf: the collectives' bodies are alike, and each needs its own address (a
  # probe per function).
  add_library(eacgm_fake_libnccl SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_libnccl.c)
  target_compile_options(eacgm_fake_libnccl PRIVATE -O1 -fno-ipa-icf)
  target_link_options(eacgm_fake_libnccl PRIVATE -Wl,-soname,libnccl.so.2)
  set_target_properties(eacgm_fake_libnccl PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fake_libnccl
                        OUTPUT_NAME nccl PREFIX lib SUFFIX .so.2 NO_SONAME ON C_VISIBILITY_PRESET hidden)

  add_executable(nccl_ranks ${CMAKE_SOURCE_DIR}/tests/programs/nccl_ranks.c)
  target_compile_options(nccl_ranks PRIVATE -O2)
  target_link_libraries(nccl_ranks PRIVATE eacgm_fake_libnccl)
  set_target_properties(nccl_ranks PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
                        BUILD_RPATH ${CMAKE_BINARY_DIR}/fake_libnccl)

  function(eacgm_fake_libnccl_attach)
    if(TARGET eacgm_integration_tests)
      add_dependencies(eacgm_integration_tests nccl_ranks)
    endif()
  endfunction()
  cmake_language(DEFER CALL eacgm_fake_libnccl_attach)
endif()
