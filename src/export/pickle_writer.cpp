// Pickle protocol 2 opcodes (Python's Lib/pickletools.py documents each): containers are
// built as an empty one, a MARK, their items, then one APPENDS / SETITEMS / TUPLE.
#include "export/pickle_writer.h"

#include <bit>
#include <cassert>
#include <cstring>

namespace eacgm::exporting {
namespace {

constexpr std::uint8_t kProto = 0x80;
constexpr std::uint8_t kStop = '.';
constexpr std::uint8_t kNone = 'N';
constexpr std::uint8_t kTrue = 0x88;
constexpr std::uint8_t kFalse = 0x89;
constexpr std::uint8_t kBinInt1 = 'K';     // unsigned 1 byte
constexpr std::uint8_t kBinInt2 = 'M';     // unsigned 2 bytes, little-endian
constexpr std::uint8_t kBinInt = 'J';      // signed 4 bytes, little-endian
constexpr std::uint8_t kLong1 = 0x8a;      // n bytes of two's complement, little-endian
constexpr std::uint8_t kBinFloat = 'G';    // IEEE double, big-endian
constexpr std::uint8_t kBinUnicode = 'X';  // 4-byte length, UTF-8
constexpr std::uint8_t kMark = '(';
constexpr std::uint8_t kEmptyList = ']';
constexpr std::uint8_t kAppends = 'e';
constexpr std::uint8_t kTuple = 't';
constexpr std::uint8_t kEmptyDict = '}';
constexpr std::uint8_t kSetItems = 'u';

}  // namespace

PickleWriter::PickleWriter() {
  byte(kProto);
  byte(2);
}

void PickleWriter::little_endian(std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) byte(static_cast<std::uint8_t>(v >> (8 * i)));
}

PickleWriter& PickleWriter::none() {
  byte(kNone);
  return *this;
}

PickleWriter& PickleWriter::boolean(bool v) {
  byte(v ? kTrue : kFalse);
  return *this;
}

PickleWriter& PickleWriter::integer(std::int64_t v) {
  if (v >= 0 && v <= 0xff) {
    byte(kBinInt1);
    little_endian(static_cast<std::uint64_t>(v), 1);
  } else if (v >= 0 && v <= 0xffff) {
    byte(kBinInt2);
    little_endian(static_cast<std::uint64_t>(v), 2);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    byte(kBinInt);
    little_endian(static_cast<std::uint64_t>(v), 4);
  } else {
    // The fewest bytes whose top bit still carries the sign.
    int n = 8;
    while (n > 1) {
      const std::int64_t shifted = v >> (8 * (n - 1) - 1);
      if (shifted != 0 && shifted != -1) break;
      --n;
    }
    byte(kLong1);
    byte(static_cast<std::uint8_t>(n));
    little_endian(static_cast<std::uint64_t>(v), n);
  }
  return *this;
}

PickleWriter& PickleWriter::real(double v) {
  byte(kBinFloat);
  const auto bits = std::bit_cast<std::uint64_t>(v);
  for (int i = 7; i >= 0; --i) byte(static_cast<std::uint8_t>(bits >> (8 * i)));
  return *this;
}

PickleWriter& PickleWriter::str(std::string_view v) {
  byte(kBinUnicode);
  little_endian(v.size(), 4);
  out_.append(v);
  return *this;
}

PickleWriter& PickleWriter::open(Open container) {
  if (container == Open::kList) byte(kEmptyList);
  if (container == Open::kDict) byte(kEmptyDict);
  byte(kMark);
  open_.push_back(container);
  return *this;
}

PickleWriter& PickleWriter::begin_list() { return open(Open::kList); }
PickleWriter& PickleWriter::begin_tuple() { return open(Open::kTuple); }
PickleWriter& PickleWriter::begin_dict() { return open(Open::kDict); }

PickleWriter& PickleWriter::end() {
  assert(!open_.empty());
  const Open o = open_.back();
  open_.pop_back();
  byte(o == Open::kList ? kAppends : o == Open::kTuple ? kTuple : kSetItems);
  return *this;
}

std::string PickleWriter::finish() {
  assert(open_.empty());
  byte(kStop);
  return std::move(out_);
}

}  // namespace eacgm::exporting
