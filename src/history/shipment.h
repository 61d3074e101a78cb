// What a node ships to the fleet's store in one transaction (history/fleet_shipper.h):
// rows read from its own store, each value in its column's order (schema.h) with names as
// their text, and the marks the fleet store keeps of how far the node's rows are there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "history/schema.h"

namespace eacgm::history {

// NULL, an integer, a real, or text (a name, text, or a blob's bytes).
using ShippedValue = std::variant<std::monostate, std::int64_t, double, std::string>;
using ShippedRow = std::vector<ShippedValue>;

// A table's rows. Tiered rows replace the node's rows of the shipment's tier and range
// (a range shipped again is the same range); rows of a keyed table combine with the row
// there as a write's do (a process's span grows); rows of a table without a key (events)
// are added unless the same row is there.
struct ShippedRows {
  const Table* table = nullptr;
  std::vector<ShippedRow> rows;
};

// A key of the fleet store's meta, raised to `value` (or set once, `keep_first`).
struct ShipMark {
  std::string key;
  std::int64_t value = 0;
  bool keep_first = false;
};

struct Shipment {
  int tier = 0;  // of the tiered rows
  std::int64_t from_ns = 0, to_ns = 0;
  std::vector<ShippedRows> tables;
  std::vector<ShipMark> marks;

  std::size_t rows() const {
    std::size_t n = 0;
    for (const auto& t : tables) n += t.rows.size();
    return n;
  }
};

}  // namespace eacgm::history
