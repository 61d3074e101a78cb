// BytesRule: how many bytes a traced call moved (copies, memsets, NCCL calls), from its
// spec's derived `bytes` value, resolved once per spec so the hot path does no name
// lookups.
#pragma once

#include <cstdint>
#include <optional>

#include "core/call_event.h"

namespace eacgm {

class BytesRule {
 public:
  BytesRule() = default;
  // The spec's derived `bytes` (a count, a product of two or three args times a constant, an element count
  // times 2 or 4, or an NCCL count times its datatype's size); none when it has no such value.
  static BytesRule of(const ProbeSpec& spec);

  bool has_bytes() const { return op_ != Op::kNone; }
  // The bytes of one call of the spec the rule was made from; nullopt when the spec has
  // no `bytes`, an argument could not be read or the NCCL datatype is unknown.
  std::optional<std::uint64_t> bytes(const CallEvent& event) const;

 private:
  enum class Op : std::uint8_t { kNone, kScaled, kProduct, kNcclDtype };
  Op op_ = Op::kNone;
  std::uint8_t from_ = 0;
  std::uint8_t with_ = 0;
  std::uint8_t with2_ = 0;  // kProduct's third factor, when has_with2_
  bool has_with2_ = false;
  std::uint32_t scale_ = 1;
};

}  // namespace eacgm
