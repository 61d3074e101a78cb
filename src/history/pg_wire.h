// Big-endian integers as PostgreSQL's binary formats (parameters, results, COPY) have them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace eacgm::history::pg_wire {

template <class T>
void put(std::string& buf, T v) {
  using U = std::make_unsigned_t<T>;
  auto u = static_cast<U>(v);
  char bytes[sizeof(U)];
  for (std::size_t i = 0; i < sizeof(U); ++i) {
    bytes[sizeof(U) - 1 - i] = static_cast<char>(u & 0xffU);
    u = static_cast<U>(u >> 8U);
  }
  buf.append(bytes, sizeof(U));
}

template <class T>
T get(const char* p) {
  using U = std::make_unsigned_t<T>;
  U u = 0;
  for (std::size_t i = 0; i < sizeof(U); ++i)
    u = static_cast<U>((u << 8U) | static_cast<unsigned char>(p[i]));
  return static_cast<T>(u);
}

}  // namespace eacgm::history::pg_wire
