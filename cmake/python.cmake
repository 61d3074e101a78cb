# The Python module: build/python/eacgm holds the package (python/eacgm/*.py copied) and
# its extension _eacgm (src/python_module.cpp over the eacgm_pybind stage), so that
# PYTHONPATH=build/python imports it. Built for Debian's /usr/bin/python3 (3.11); pass
# -DPython_EXECUTABLE=... for another interpreter with its headers.
set(PYBIND11_FINDPYTHON ON)
if(NOT Python_EXECUTABLE)
  set(Python_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "the Python the module is built for")
endif()
find_package(Python REQUIRED COMPONENTS Interpreter Development.Module)
find_package(pybind11 CONFIG REQUIRED)

set(EACGM_PY_DIR ${CMAKE_BINARY_DIR}/python/eacgm)
pybind11_add_module(eacgm_pymodule MODULE ${CMAKE_SOURCE_DIR}/src/python_module.cpp)
set_target_properties(eacgm_pymodule PROPERTIES OUTPUT_NAME _eacgm LIBRARY_OUTPUT_DIRECTORY ${EACGM_PY_DIR})
target_link_libraries(eacgm_pymodule PRIVATE eacgm_pybind)
set_target_properties(eacgm_pymodule PROPERTIES EACGM_DYNAMIC_DEPS ON)
# The agent's code stays inside the module: no symbol of it clashes with another extension's.
target_link_options(eacgm_pymodule PRIVATE -Wl,--exclude-libs,ALL)

file(GLOB_RECURSE eacgm_py_sources CONFIGURE_DEPENDS RELATIVE ${CMAKE_SOURCE_DIR}/python/eacgm
     ${CMAKE_SOURCE_DIR}/python/eacgm/*.py ${CMAKE_SOURCE_DIR}/python/eacgm/*.pyi
     ${CMAKE_SOURCE_DIR}/python/eacgm/py.typed)
set(eacgm_py_outputs)
foreach(f ${eacgm_py_sources})
  add_custom_command(OUTPUT ${EACGM_PY_DIR}/${f}
    COMMAND ${CMAKE_COMMAND} -E copy_if_different ${CMAKE_SOURCE_DIR}/python/eacgm/${f} ${EACGM_PY_DIR}/${f}
    DEPENDS ${CMAKE_SOURCE_DIR}/python/eacgm/${f})
  list(APPEND eacgm_py_outputs ${EACGM_PY_DIR}/${f})
endforeach()
add_custom_target(eacgm_python_files ALL DEPENDS ${eacgm_py_outputs})
# The package's files are in place from the configure on: CMake makes the extension's
# output directory then, and an empty build/python/eacgm would import as an empty namespace
# package (`import eacgm` succeeds, `eacgm.trace` does not exist). Without the extension
# the package runs on the command line (_cli.py); the rules above keep the copies current.
file(COPY ${CMAKE_SOURCE_DIR}/python/eacgm/ DESTINATION ${EACGM_PY_DIR}
     FILES_MATCHING PATTERN "*.py" PATTERN "*.pyi" PATTERN "py.typed")
add_dependencies(eacgm_pymodule eacgm_python_files)

# `cmake --install build` (or `make install` in build/) puts the package in site-packages.
if(Python_SITEARCH)
  install(TARGETS eacgm_pymodule LIBRARY DESTINATION ${Python_SITEARCH}/eacgm)
  install(DIRECTORY ${EACGM_PY_DIR}/ DESTINATION ${Python_SITEARCH}/eacgm
          FILES_MATCHING PATTERN "*.py" PATTERN "*.pyi" PATTERN "py.typed" PATTERN "__pycache__" EXCLUDE)
endif()
