// libFuzzer target for the governance protocol decoder (src/govern/protocol): any bytes
// either decode to a message that re-encodes to the same frame, or are refused; a
// stream of frames is consumed frame by frame without reading past its end.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "govern/protocol/codec.h"

using namespace eacgm::govern::protocol;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::size_t pos = 0;
  while (pos < size) {
    Decoded d;
    DecodeStatus s = decode(data + pos, size - pos, &d);
    if (s != DecodeStatus::kOk) {
      if (describe(s) == nullptr) std::abort();
      break;
    }
    if (d.consumed < kHeaderSize || d.consumed > size - pos) std::abort();
    Frame f;
    if (!encode(d.message, d.request_id, &f)) std::abort();  // a decoded message always fits
    if (f.size != d.consumed || std::memcmp(f.bytes, data + pos, f.size) != 0) std::abort();
    pos += d.consumed;
  }
  return 0;
}
