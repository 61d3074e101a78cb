// [store]'s keys: the retention periods' ranges and the size cap written as a size.
#include "history/store_config.h"

#include <string_view>

#include "core/byte_size.h"
#include "core/config_reader.h"

namespace eacgm::history {
namespace {

Status read_store(const ConfigTable& table, StoreConfig& store) {
  constexpr std::string_view kKeys[] = {"url",       "node",     "interval_s",    "raw_hours", "minute_days",
                                        "hour_days", "max_size", "spool_batches", "fleet_url"};
  if (auto s = table.check_keys(kKeys); !s) return s;
  if (auto s = table.read_string("url", store.url); !s) return s;
  if (auto s = table.read_string("node", store.node); !s) return s;
  if (auto s = table.read_string("fleet_url", store.fleet_url); !s) return s;
  if (auto s = table.read_number("interval_s", 1, 600, store.interval_s); !s) return s;
  if (auto s = table.read_number("raw_hours", 0.1, 24.0 * 366, store.raw_hours); !s) return s;
  if (auto s = table.read_number("minute_days", 0.01, 3660, store.minute_days); !s) return s;
  if (auto s = table.read_number("hour_days", 0.01, 36600, store.hour_days); !s) return s;
  if (auto size = table.get("max_size")) {
    const std::string* text = size->string();
    auto bytes = text != nullptr ? parse_byte_size(*text) : Result<std::uint64_t>(make_error("not a string"));
    if (!bytes) {
      return table.fail_at(
          "max_size",
          {"max_size must be a size such as \"1GiB\" or \"500MB\" (\"0\" for no cap): ", bytes.error()});
    }
    store.max_bytes = *bytes;
  }
  return table.read_integer("spool_batches", 1, 100000, store.spool_batches);
}

}  // namespace

void add_store_section(ConfigSections& sections, StoreConfig& store) {
  sections.add_table<read_store>("store", store);
}

}  // namespace eacgm::history
