# Test fixtures for tests/unit/probe: a small versioned shared library (and its stripped copy)
# whose symbols, versions and file offsets the ELF reader is checked against.
set(EACGM_FX_DIR ${CMAKE_BINARY_DIR}/tests/unit/probe)
set(EACGM_FX_SRC ${CMAKE_SOURCE_DIR}/tests/unit/probe/fixtures)

add_library(eacgm_fx_elf SHARED ${EACGM_FX_SRC}/elf_fixture.c)
set_target_properties(eacgm_fx_elf PROPERTIES
  OUTPUT_NAME eacgm_fx_elf
  LIBRARY_OUTPUT_DIRECTORY ${EACGM_FX_DIR}
  LINK_DEPENDS ${EACGM_FX_SRC}/elf_fixture.map)
target_compile_options(eacgm_fx_elf PRIVATE -O2 -fPIC)
# -Ttext-segment moves every p_vaddr by 0x40000000 but not p_offset, so a reader that
# confuses st_value with the file offset fails. The fixed build id is asserted verbatim.
target_link_options(eacgm_fx_elf PRIVATE
  -Wl,--version-script=${EACGM_FX_SRC}/elf_fixture.map
  -Wl,-Ttext-segment=0x40000000
  -Wl,--build-id=0x0123456789abcdef0123456789abcdef01234567
  -Wl,-z,separate-code)

# The same library without .symtab: only exported (.dynsym) symbols remain.
set(EACGM_FX_STRIPPED ${EACGM_FX_DIR}/libeacgm_fx_elf_stripped.so)
add_custom_command(OUTPUT ${EACGM_FX_STRIPPED}
  COMMAND ${CMAKE_STRIP} --strip-all -o ${EACGM_FX_STRIPPED} $<TARGET_FILE:eacgm_fx_elf>
  DEPENDS eacgm_fx_elf
  COMMENT "Stripping the ELF test fixture"
  VERBATIM)
add_custom_target(eacgm_fx_elf_stripped DEPENDS ${EACGM_FX_STRIPPED})

# The unit-test target is defined after this file is included; wire it up at the end.
function(eacgm_probe_fixtures_wire)
  if(TARGET eacgm_unit_probe)
    add_dependencies(eacgm_unit_probe eacgm_fx_elf eacgm_fx_elf_stripped)
    target_compile_definitions(eacgm_unit_probe PRIVATE
      EACGM_FX_ELF_LIB="$<TARGET_FILE:eacgm_fx_elf>"
      EACGM_FX_ELF_STRIPPED="${EACGM_FX_STRIPPED}"
      EACGM_FX_ELF_SOURCE="${EACGM_FX_SRC}/elf_fixture.c")
    target_link_libraries(eacgm_unit_probe PRIVATE ${CMAKE_DL_LIBS})
  endif()
endfunction()
cmake_language(DEFER CALL eacgm_probe_fixtures_wire)
