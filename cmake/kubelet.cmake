# The kubelet stage's gRPC: Debian's libgrpc++ (libgrpc++-dev, protobuf-compiler-grpc),
# linked statically like libbpf so build/eacgm stays self-contained; the insecure
# ("unsecure") variant, since the kubelet's socket is a local Unix socket. Debian's
# pkg-config files leave some of the static archives out; they are listed here.
find_program(PROTOC protoc REQUIRED)
find_program(GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
set(EACGM_PROTO_OUT ${CMAKE_BINARY_DIR}/generated/kubelet)
file(MAKE_DIRECTORY ${EACGM_PROTO_OUT})
set(EACGM_POD_RESOURCES_PROTO ${CMAKE_SOURCE_DIR}/src/kubelet/podresources_v1.proto)
set(EACGM_POD_RESOURCES_GENERATED
  ${EACGM_PROTO_OUT}/podresources_v1.pb.cc ${EACGM_PROTO_OUT}/podresources_v1.pb.h
  ${EACGM_PROTO_OUT}/podresources_v1.grpc.pb.cc ${EACGM_PROTO_OUT}/podresources_v1.grpc.pb.h)
add_custom_command(
  OUTPUT ${EACGM_POD_RESOURCES_GENERATED}
  COMMAND ${PROTOC} --proto_path=${CMAKE_SOURCE_DIR}/src/kubelet --cpp_out=${EACGM_PROTO_OUT}
          --grpc_out=${EACGM_PROTO_OUT} --plugin=protoc-gen-grpc=${GRPC_CPP_PLUGIN} ${EACGM_POD_RESOURCES_PROTO}
  DEPENDS ${EACGM_POD_RESOURCES_PROTO}
  COMMENT "protoc podresources_v1.proto")
# The generated code, compiled without the project's warnings-as-errors.
add_library(pod_resources_proto STATIC
  ${EACGM_PROTO_OUT}/podresources_v1.pb.cc ${EACGM_PROTO_OUT}/podresources_v1.grpc.pb.cc)
set_target_properties(pod_resources_proto PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_compile_options(pod_resources_proto PRIVATE -w)
target_include_directories(pod_resources_proto SYSTEM PUBLIC ${EACGM_PROTO_OUT})

set(grpc_archives grpc++_unsecure grpc_unsecure upb address_sorting gpr protobuf-lite cares re2)
set(EACGM_GRPC_STATIC)
foreach(lib ${grpc_archives})
  find_library(GRPC_STATIC_${lib} lib${lib}.a REQUIRED)
  list(APPEND EACGM_GRPC_STATIC ${GRPC_STATIC_${lib}})
endforeach()
file(GLOB EACGM_ABSL_STATIC /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/libabsl_*.a)
if(NOT EACGM_ABSL_STATIC)
  message(FATAL_ERROR "Abseil's static libraries (libabsl-dev) not found")
endif()
target_link_libraries(pod_resources_proto PUBLIC ${EACGM_GRPC_STATIC}
  -Wl,--start-group ${EACGM_ABSL_STATIC} -Wl,--end-group ${LIBZ_STATIC} Threads::Threads rt ${CMAKE_DL_LIBS})
