# Compiles a BPF C program with clang and embeds it through a bpftool skeleton.
find_program(CLANG_BPF clang REQUIRED)
find_program(BPFTOOL bpftool PATHS /usr/sbin /usr/local/sbin REQUIRED)

function(eacgm_bpf_skeleton name src)
  # Every program includes bpf/events.h; some also a header of their own.
  file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/bpf/*.h)
  set(obj ${CMAKE_BINARY_DIR}/bpf/${name}.bpf.o)
  set(skel ${CMAKE_BINARY_DIR}/bpf/${name}.skel.h)
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/bpf
    COMMAND ${CLANG_BPF} -g -O2 -target bpf -D__TARGET_ARCH_x86 -Wall -Werror
            -I${CMAKE_SOURCE_DIR}/bpf -I/usr/include/x86_64-linux-gnu -c ${src} -o ${obj}
    COMMAND ${BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}
    DEPENDS ${src} ${headers}
    COMMENT "BPF ${name}"
    VERBATIM)
  add_custom_target(${name}_skel DEPENDS ${skel})
endfunction()
