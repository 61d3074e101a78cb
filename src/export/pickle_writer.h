// PickleWriter: Python pickle (protocol 2) of None, bools, ints, floats, str, lists, tuples
// and dicts, written as the values come, so the flight recorder's dumps are read by
// `pickle.load` (and PyTorch's analyzer) with no Python at run time.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace eacgm::exporting {

// Containers open with begin_* and close with end(), in order; a dict takes key, value,
// key, value ... Values after finish() are an error of the caller (checked in debug builds).
class PickleWriter {
 public:
  PickleWriter();

  PickleWriter& none();
  PickleWriter& boolean(bool v);
  PickleWriter& integer(std::int64_t v);
  PickleWriter& real(double v);
  PickleWriter& str(std::string_view v);
  PickleWriter& begin_list();
  PickleWriter& begin_tuple();
  PickleWriter& begin_dict();
  PickleWriter& end();
  // The bytes, with pickle's STOP; every container must be closed.
  std::string finish();

 private:
  enum class Open : std::uint8_t { kList, kTuple, kDict };
  void byte(std::uint8_t b) { out_.push_back(static_cast<char>(b)); }
  void little_endian(std::uint64_t v, int bytes);
  PickleWriter& open(Open container);

  std::string out_;
  std::vector<Open> open_;
};

}  // namespace eacgm::exporting
