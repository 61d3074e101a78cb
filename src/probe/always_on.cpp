// Classifies the built-in specs for the always-on mode (probe/always_on.h).
#include "probe/always_on.h"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>

namespace eacgm::probe {
namespace {

bool starts_with_any(std::string_view name, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view p) { return name.starts_with(p); });
}

// Runtime calls whose operation reaches a driver probe of the cuda_driver catalog.
bool reaches_driver_probe(std::string_view name) {
  return starts_with_any(
      name, {"cudaLaunchKernel", "cudaLaunchCooperativeKernel", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset",
             "cudaStreamSynchronize", "cudaDeviceSynchronize"});
}

}  // namespace

AlwaysOn always_on_role(const ProbeSpec& spec) {
  const std::string_view name = spec.name;
  if (spec.domain == "python" || spec.domain == "nccl" || spec.split_return || !spec.usdt.empty()) {
    return AlwaysOn::kPerCall;
  }
  // Out-parameters and strings are read per call: allocations' addresses, names.
  const bool per_call_args = std::any_of(spec.args.begin(), spec.args.end(), [](const ArgSpec& a) {
    return a.at_exit || a.kind == ArgKind::kString;
  });
  if (per_call_args) return AlwaysOn::kPerCall;
  // Frees and virtual-memory mapping: the ledger pairs them with their allocations.
  if (name.find("Free") != std::string_view::npos ||
      starts_with_any(name, {"cuMemMap", "cuMemUnmap", "cuMemRelease", "__cuda"})) {
    return AlwaysOn::kPerCall;
  }
  // CUDA graphs: capture, nodes and launches are followed call by call (a launch counts
  // its graph's work), and are rare.
  if (name.find("Graph") != std::string_view::npos || name.find("Capture") != std::string_view::npos) {
    return AlwaysOn::kPerCall;
  }
  if (spec.domain == "cuda" && reaches_driver_probe(name)) return AlwaysOn::kSkip;
  return AlwaysOn::kCount;
}

bool times_every_call(const ProbeSpec& spec) {
  return (spec.domain == "cuda" || spec.domain == "cuda_driver") &&
         wait_kind_of_function(spec.name).has_value();
}

bool pinned_probe(const ProbeInfo& probe, const std::set<std::string>& pinned) {
  return pinned.contains(probe.function) || pinned.contains(probe.spec.name) || times_every_call(probe.spec);
}

bool cycled_probe(const ProbeInfo& probe, const std::set<std::string>& pinned) {
  const GpuWork w = probe.spec.work;
  return probe.counted && !probe.spec.until_driver && !pinned_probe(probe, pinned) &&
         (w == GpuWork::kKernel || w == GpuWork::kCopy || w == GpuWork::kMemset);
}

bool waits_in_calls(const ProbeSpec& spec) {
  return spec.waits || spec.domain == "nccl" || times_every_call(spec);
}

std::optional<DriverOperation> driver_operation(const ProbeSpec& spec) {
  if (spec.work != GpuWork::kNone) return DriverOperation{spec.work, std::nullopt};
  if (auto wait = wait_kind_of_function(spec.name)) return DriverOperation{GpuWork::kNone, wait};
  return std::nullopt;
}

CaptureBoundary capture_boundary(std::string_view function) {
  for (std::string_view suffix : {"_ptsz", "_ptds"}) {
    if (function.ends_with(suffix)) function.remove_suffix(suffix.size());
  }
  if (function == "cudaStreamBeginCapture" || function == "cuStreamBeginCapture_v2" ||
      function == "cudaStreamBeginCaptureToGraph" || function == "cuStreamBeginCaptureToGraph") {
    return CaptureBoundary::kBegin;
  }
  if (function == "cudaStreamEndCapture" || function == "cuStreamEndCapture") return CaptureBoundary::kEnd;
  return CaptureBoundary::kNone;
}

std::vector<ProbeSpec> specs_for_mode(std::vector<ProbeSpec> specs, TraceMode mode, bool one_layer) {
  // A runtime spec is left to the driver's probes only where the driver catalog's probes
  // of its operation are selected too (`--probes cuda` alone keeps the runtime's).
  std::set<DriverOperation> at_driver;
  for (const auto& s : specs) {
    if (auto op = driver_operation(s); op && s.domain == "cuda_driver") at_driver.insert(*op);
  }
  for (auto& s : specs) {
    const auto op = driver_operation(s);
    const bool skipped = s.always_on == AlwaysOn::kSkip;
    s.until_driver = skipped && op && at_driver.contains(*op) && (mode == TraceMode::kAlwaysOn || one_layer);
    if (mode == TraceMode::kPerCall) {
      s.always_on = AlwaysOn::kPerCall;
    } else if (skipped) {
      s.always_on = AlwaysOn::kCount;  // counted here (until the driver's probe attaches, if marked)
    }
  }
  return specs;
}

}  // namespace eacgm::probe
