# `make install` (cmake --install): the agent, the governance hook and scheduler, the
# systemd unit and its configuration file, the documentation the unit points to, and the
# Prometheus rules and Grafana dashboards. Paths under the prefix (default /usr/local);
# the configuration goes to /etc/eacgm (under DESTDIR when set), where the unit reads it,
# and an existing one is never overwritten.
include(GNUInstallDirs)

install(TARGETS eacgm RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET eacgm-sched)
  install(TARGETS eacgm-sched RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
# Preloaded by path (docs/governance.md): kept out of the linker's search path.
install(TARGETS eacgm_hook LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/eacgm)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR} FILES_MATCHING PATTERN "*.md")
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/BENCHMARKS.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/deploy/grafana ${CMAKE_SOURCE_DIR}/deploy/prometheus
        DESTINATION ${CMAKE_INSTALL_DATADIR}/eacgm)
install(FILES ${CMAKE_SOURCE_DIR}/deploy/prometheus.yml DESTINATION ${CMAKE_INSTALL_DATADIR}/eacgm/prometheus)

# The unit names the installed binary and documentation (the file in deploy/ names the
# default prefix's).
install(CODE "
  set(prefix \"\${CMAKE_INSTALL_PREFIX}\")
  file(READ \"${CMAKE_SOURCE_DIR}/deploy/eacgm.service\" unit)
  string(REPLACE \"/usr/local/bin/eacgm\" \"\${prefix}/${CMAKE_INSTALL_BINDIR}/eacgm\" unit \"\${unit}\")
  string(REPLACE \"file:///usr/local/share/doc/eacgm/\" \"file://\${prefix}/${CMAKE_INSTALL_DOCDIR}/\" unit \"\${unit}\")
  set(dir \"\$ENV{DESTDIR}\${prefix}/lib/systemd/system\")
  file(MAKE_DIRECTORY \"\${dir}\")
  file(WRITE \"\${dir}/eacgm.service\" \"\${unit}\")
  message(STATUS \"Installing: \${dir}/eacgm.service\")
  set(config \"\$ENV{DESTDIR}/etc/eacgm/eacgm.toml\")
  if(EXISTS \"\${config}\")
    message(STATUS \"Kept: \${config} (not overwritten)\")
  else()
    file(MAKE_DIRECTORY \"\$ENV{DESTDIR}/etc/eacgm\")
    file(COPY_FILE \"${CMAKE_SOURCE_DIR}/deploy/eacgm.toml\" \"\${config}\")
    message(STATUS \"Installing: \${config}\")
  endif()
")
