// BytesRule: the derived `bytes` of a spec, resolved to argument slots.
#include "core/call_bytes.h"

#include <string_view>

#include "core/nccl_types.h"

namespace eacgm {

BytesRule BytesRule::of(const ProbeSpec& spec) {
  BytesRule r;
  for (const auto& d : spec.derived) {
    if (d.name != "bytes") continue;
    const int from = arg_index(spec, d.from);
    if (from < 0) return r;
    r.from_ = static_cast<std::uint8_t>(from);
    switch (d.op) {
      case DerivedArg::Op::kCopy:
        r.op_ = Op::kScaled;
        break;
      case DerivedArg::Op::kTimes2:
        r.op_ = Op::kScaled;
        r.scale_ = 2;
        break;
      case DerivedArg::Op::kTimes4:
        r.op_ = Op::kScaled;
        r.scale_ = 4;
        break;
      case DerivedArg::Op::kProduct:
      case DerivedArg::Op::kTimesNcclDtype: {
        const int with = arg_index(spec, d.with);
        if (with < 0) return r;
        r.with_ = static_cast<std::uint8_t>(with);
        r.op_ = d.op == DerivedArg::Op::kProduct ? Op::kProduct : Op::kNcclDtype;
        if (d.op == DerivedArg::Op::kProduct) {
          r.scale_ = d.scale;
          if (!d.with2.empty()) {
            const int with2 = arg_index(spec, d.with2);
            if (with2 < 0) return BytesRule{};
            r.with2_ = static_cast<std::uint8_t>(with2);
            r.has_with2_ = true;
          }
        }
        break;
      }
      default:
        break;
    }
    return r;
  }
  return r;
}

std::optional<std::uint64_t> BytesRule::bytes(const CallEvent& event) const {
  if (op_ == Op::kNone) return std::nullopt;
  const auto readable = [&](std::uint8_t i) { return i < event.nargs && !(event.fault_mask & (1u << i)); };
  if (!readable(from_)) return std::nullopt;
  const std::uint64_t v = event.args[from_];
  switch (op_) {
    case Op::kScaled:
      return v * scale_;
    case Op::kProduct: {
      if (!readable(with_) || (has_with2_ && !readable(with2_))) return std::nullopt;
      const std::uint64_t third = has_with2_ ? event.args[with2_] : 1;
      return v * event.args[with_] * third * scale_;
    }
    case Op::kNcclDtype:
      if (!readable(with_)) return std::nullopt;
      if (auto size = nccl_dtype_size(event.args[with_])) return v * *size;
      return std::nullopt;
    case Op::kNone:
      break;
  }
  return std::nullopt;
}

}  // namespace eacgm
