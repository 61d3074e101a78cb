// Counter registration, reading and the accounting line.
#include "core/counter_registry.h"

#include <fmt/format.h>

#include <set>

namespace eacgm {

std::uint64_t CounterValues::get(std::string_view key) const {
  for (const auto& v : values) {
    if (v.def->key == key) return v.value;
  }
  return 0;
}

bool CounterValues::has(std::string_view key) const {
  for (const auto& v : values) {
    if (v.def->key == key) return true;
  }
  return false;
}

std::string CounterValues::accounting_line() const {
  std::set<std::string_view> live_groups;
  for (const auto& v : values) {
    if (v.def->show == CounterShow::kGroup && v.value != 0) live_groups.insert(v.def->group);
  }
  std::string out;
  for (const auto& v : values) {
    bool shown = false;
    switch (v.def->show) {
      case CounterShow::kAlways:
        shown = true;
        break;
      case CounterShow::kNonZero:
        shown = v.value != 0;
        break;
      case CounterShow::kGroup:
        shown = live_groups.count(v.def->group) > 0;
        break;
      case CounterShow::kHidden:
        break;
    }
    if (!shown) continue;
    if (!out.empty()) out += ' ';
    out += fmt::format("{}={}", v.def->key, v.value);
  }
  return out;
}

void CounterRegistry::add(CounterDef def, Read read) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& e : entries_) {
    if (e.def->key == def.key) {
      e.def = std::make_shared<const CounterDef>(std::move(def));
      e.read = std::move(read);
      return;
    }
  }
  entries_.push_back({std::make_shared<const CounterDef>(std::move(def)), std::move(read)});
}

CounterValues CounterRegistry::read() const {
  std::lock_guard<std::mutex> lock(mutex_);
  CounterValues out;
  out.values.reserve(entries_.size());
  for (const auto& e : entries_) out.values.push_back({e.def, e.read ? e.read() : 0});
  return out;
}

std::vector<std::shared_ptr<const CounterDef>> CounterRegistry::defs() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<const CounterDef>> out;
  for (const auto& e : entries_) out.push_back(e.def);
  return out;
}

}  // namespace eacgm
