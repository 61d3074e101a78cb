// Every counter the agent keeps about itself, declared once: the accounting-line key,
// the metric name, help, unit, kind and when the accounting line shows it. Parts that
// count register their readers by key (`agent_counter("drops")`), and docs/metrics.md
// is generated from this table.
#pragma once

#include <span>
#include <string_view>

#include "core/counter_registry.h"

namespace eacgm {

struct AgentCounterSpec {
  std::string_view key;
  std::string_view metric;
  CounterKind kind;
  CounterShow show;
  std::string_view group;
  std::string_view help;
};

// In accounting-line order.
std::span<const AgentCounterSpec> agent_counter_table();

// The definition of the counter `key`; a key missing from the table is a programming
// error and yields a definition whose help says so (and a unit test catches it).
CounterDef agent_counter(std::string_view key);

}  // namespace eacgm
