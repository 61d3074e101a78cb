// Encoding and strict decoding of framed messages: anything malformed (bad magic,
// another version, an unknown type, a length over the limit or not matching the type's
// layout, a string with bytes outside printable ASCII, trailing bytes) is rejected with a
// reason, never guessed at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "govern/protocol/messages.h"

namespace eacgm::govern::protocol {

struct Frame {
  std::uint8_t bytes[kHeaderSize + kMaxPayload];
  std::size_t size = 0;
};

// False only if the message cannot be framed (a string over its limit).
bool encode(const Message& m, std::uint32_t request_id, Frame* out);

enum class DecodeStatus {
  kOk,
  kNeedMore,  // a valid prefix: read more bytes
  kBadMagic,
  kBadVersion,
  kBadType,
  kTooLong,
  kBadPayload,
};
const char* describe(DecodeStatus s);

struct Decoded {
  Message message;
  std::uint32_t request_id = 0;
  std::size_t consumed = 0;  // bytes of `data` this message took
};

// Decodes the first message of data[0, size).
DecodeStatus decode(const std::uint8_t* data, std::size_t size, Decoded* out);

}  // namespace eacgm::govern::protocol
