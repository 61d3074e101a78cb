// WorkRule: what GPU work a traced call issued (a kernel, a memset, a copy, a graph
// launch), its stream, bytes and copy direction, read from the call's arguments by
// rules resolved once per spec. One operation is counted once: a driver call made inside
// a runtime call is `nested` and is the same operation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/call_bytes.h"
#include "core/call_event.h"

namespace eacgm {

class WorkRule {
 public:
  WorkRule() = default;
  static WorkRule of(const ProbeSpec& spec);

  GpuWork kind() const { return kind_; }
  // Graph nodes (kGraphNode): the work the node will do when its graph is launched
  // (kKernel, kMemset or kCopy); for other calls, kind().
  GpuWork node_kind() const { return node_kind_; }
  // The stream the call was issued on ("stream" argument); 0 (the default stream) when
  // the call has none or it could not be read.
  std::uint64_t stream(const CallEvent& event) const;
  std::optional<std::uint64_t> bytes(const CallEvent& event) const { return bytes_.bytes(event); }
  // Copies: "HtoD", "DtoH", "DtoD", "HtoH", "HtoA", "AtoH", "AtoD", "DtoA", "AtoA", "peer",
  // or "default" (unified addressing: the runtime or driver tells by the pointers).
  std::string_view direction(const CallEvent& event) const;

 private:
  GpuWork kind_ = GpuWork::kNone;
  BytesRule bytes_;
  GpuWork node_kind_ = GpuWork::kNone;
  std::string fixed_direction_;        // the spec's, when the function fixes it
  int stream_ = -1;                    // argument indexes, -1 when absent
  int kind_arg_ = -1;                  // cudaMemcpyKind
  int src_type_ = -1, dst_type_ = -1;  // CUmemorytype
};

// A spec counts as issuing a kernel launch when it says so, or (user specs) when it
// names the kernel it launches.
GpuWork work_of(const ProbeSpec& spec);

}  // namespace eacgm
