// WorkRule: argument slots and direction rules per spec.
#include "core/work_rule.h"

#include <array>

namespace eacgm {
namespace {
std::optional<std::uint64_t> value(const CallEvent& e, int i) {
  if (i < 0 || i >= e.nargs || (e.fault_mask & (1u << i))) return std::nullopt;
  return e.args[static_cast<std::size_t>(i)];
}

// cudaMemcpyKind: 0 HostToHost, 1 HostToDevice, 2 DeviceToHost, 3 DeviceToDevice, 4 Default.
std::string_view runtime_direction(std::uint64_t kind) {
  static constexpr std::array<std::string_view, 5> kNames{"HtoH", "HtoD", "DtoH", "DtoD", "default"};
  return kind < kNames.size() ? kNames[kind] : "default";
}

// CUmemorytype: 1 host, 2 device, 3 array, 4 unified (the pointer tells: unknown here).
char memory_letter(std::uint64_t type) {
  switch (type) {
    case 1:
      return 'H';
    case 2:
      return 'D';
    case 3:
      return 'A';
    default:
      return '?';
  }
}

std::string_view driver_direction(std::uint64_t src, std::uint64_t dst) {
  static constexpr std::array<std::string_view, 9> kNames{"HtoH", "HtoD", "HtoA", "DtoH", "DtoD",
                                                          "DtoA", "AtoH", "AtoD", "AtoA"};
  const std::string_view letters = "HDA";
  const std::size_t s = letters.find(memory_letter(src));
  const std::size_t d = letters.find(memory_letter(dst));
  if (s == std::string_view::npos || d == std::string_view::npos) return "default";
  return kNames[s * 3 + d];
}

}  // namespace

GpuWork work_of(const ProbeSpec& spec) {
  if (spec.work != GpuWork::kNone) return spec.work;
  for (const auto& d : spec.derived) {
    if (d.op == DerivedArg::Op::kKernelName && arg_index(spec, "grid") >= 0) return GpuWork::kKernel;
  }
  return GpuWork::kNone;
}

WorkRule WorkRule::of(const ProbeSpec& spec) {
  WorkRule r;
  r.kind_ = work_of(spec);
  if (r.kind_ == GpuWork::kNone) return r;
  r.bytes_ = BytesRule::of(spec);
  r.fixed_direction_ = spec.direction;
  r.stream_ = arg_index(spec, "stream");
  r.kind_arg_ = arg_index(spec, "kind");
  r.src_type_ = arg_index(spec, "src_type");
  r.dst_type_ = arg_index(spec, "dst_type");
  r.node_kind_ = r.kind_;
  if (r.kind_ == GpuWork::kGraphNode) {
    bool kernel = false;
    for (const auto& d : spec.derived) kernel = kernel || d.op == DerivedArg::Op::kKernelName;
    r.node_kind_ = kernel                                   ? GpuWork::kKernel
                   : (r.kind_arg_ >= 0 || r.src_type_ >= 0) ? GpuWork::kCopy
                                                            : GpuWork::kMemset;
  }
  return r;
}

std::uint64_t WorkRule::stream(const CallEvent& event) const { return value(event, stream_).value_or(0); }

std::string_view WorkRule::direction(const CallEvent& event) const {
  if (node_kind_ != GpuWork::kCopy) return {};
  if (!fixed_direction_.empty()) return fixed_direction_;
  if (auto k = value(event, kind_arg_)) return runtime_direction(*k);
  auto src = value(event, src_type_);
  auto dst = value(event, dst_type_);
  if (src && dst) return driver_direction(*src, *dst);
  return "default";
}

}  // namespace eacgm
