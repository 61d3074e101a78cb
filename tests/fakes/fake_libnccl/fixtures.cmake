# The FAKE libnccl.so.2 (tests/fakes/fake_libnccl/fake_libnccl.c): communicators of ranks
# in several processes without a GPU, each collective a rendezvous through files, at
# <build>/fake_libnccl/libnccl.so.2. Named as NCCL is, so eacgm's nccl catalog (library
# "libnccl.so*") attaches to it; the stand-in ranks (tests/programs/nccl_ranks.c) dlopen it
# by path, and nccl_fork_ranks (tests/programs/nccl_fork_ranks.c: one communicator's ranks
# as forked processes) links to it. No identical-code folding: its collectives have the same body, and each must
# keep an address of its own.
add_library(eacgm_fake_libnccl SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_libnccl.c)
target_compile_options(eacgm_fake_libnccl PRIVATE -O1 -fno-ipa-icf)
target_link_options(eacgm_fake_libnccl PRIVATE -Wl,-soname,libnccl.so.2)
set_target_properties(eacgm_fake_libnccl PROPERTIES OUTPUT_NAME nccl SUFFIX .so.2 NO_SONAME ON
                      C_VISIBILITY_PRESET hidden LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/fake_libnccl)
add_executable(nccl_ranks ${CMAKE_SOURCE_DIR}/tests/programs/nccl_ranks.c)
target_link_libraries(nccl_ranks PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(nccl_ranks PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
add_executable(nccl_fork_ranks ${CMAKE_SOURCE_DIR}/tests/programs/nccl_fork_ranks.c)
target_link_libraries(nccl_fork_ranks PRIVATE eacgm_fake_libnccl)
set_target_properties(nccl_fork_ranks PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}
                      BUILD_RPATH ${CMAKE_BINARY_DIR}/fake_libnccl)
# The integration tests' target is made after the fixtures are read.
cmake_language(DEFER CALL add_dependencies eacgm_integration_tests eacgm_fake_libnccl nccl_ranks
               nccl_fork_ranks)
