# The web UI (web/): its npm dependencies (npm ci, from package-lock.json), its Vite build
# into the build directory, and the built files embedded into the server stage as byte
# arrays (cmake/embed_web.cmake). Runs again when a file under web/ changes; nothing built
# is checked in.
find_program(NPM_EXECUTABLE npm)
find_program(NODE_EXECUTABLE node)
if(NOT NPM_EXECUTABLE OR NOT NODE_EXECUTABLE)
  message(FATAL_ERROR "node and npm are needed to build the web UI: run scripts/setup.sh (Node.js 20 or later)")
endif()

set(EACGM_WEB_DIR ${CMAKE_SOURCE_DIR}/web)
set(EACGM_WEB_DIST ${CMAKE_BINARY_DIR}/web-dist)
set(EACGM_WEB_CPP ${CMAKE_BINARY_DIR}/generated/web_assets_data.cpp)
file(GLOB_RECURSE eacgm_web_sources CONFIGURE_DEPENDS
  ${EACGM_WEB_DIR}/src/* ${EACGM_WEB_DIR}/public/*)
list(APPEND eacgm_web_sources ${EACGM_WEB_DIR}/index.html ${EACGM_WEB_DIR}/vite.config.js
  ${EACGM_WEB_DIR}/package.json)

# npm ci writes node_modules/.package-lock.json: its stamp says the install is current.
add_custom_command(
  OUTPUT ${EACGM_WEB_DIR}/node_modules/.package-lock.json
  COMMAND ${NPM_EXECUTABLE} ci --no-audit --no-fund --loglevel=error
  DEPENDS ${EACGM_WEB_DIR}/package-lock.json ${EACGM_WEB_DIR}/package.json
  WORKING_DIRECTORY ${EACGM_WEB_DIR}
  COMMENT "web: npm ci")
add_custom_command(
  OUTPUT ${EACGM_WEB_CPP}
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${EACGM_WEB_DIST}
  COMMAND ${NPM_EXECUTABLE} run --silent build -- --outDir ${EACGM_WEB_DIST} --emptyOutDir --logLevel warn
  COMMAND ${CMAKE_COMMAND} -DDIST=${EACGM_WEB_DIST} -DOUT=${EACGM_WEB_CPP} -P ${CMAKE_SOURCE_DIR}/cmake/embed_web.cmake
  DEPENDS ${eacgm_web_sources} ${EACGM_WEB_DIR}/node_modules/.package-lock.json
          ${CMAKE_SOURCE_DIR}/cmake/embed_web.cmake
  WORKING_DIRECTORY ${EACGM_WEB_DIR}
  COMMENT "web: vite build, embed")
add_custom_target(eacgm_web DEPENDS ${EACGM_WEB_CPP})
target_sources(eacgm_server PRIVATE ${EACGM_WEB_CPP})
add_dependencies(eacgm_server eacgm_web)
