// CounterRegistry: every count the agent keeps about itself (events, drops, lost
// exits, attach failures, names read back, GPU passes, ...) declared once with its
// name, help, unit and kind. The accounting line, the JSON summary and /metrics all
// read the same values from here, so a new counter is one `add` call.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace eacgm {

enum class CounterKind { kCounter, kGauge };

// When the accounting line shows a counter.
enum class CounterShow {
  kAlways,
  kNonZero,  // only when not zero
  kGroup,    // with the rest of its group, when any member is not zero
  kHidden,   // metrics and JSON only
};

struct CounterDef {
  std::string key;     // accounting-line key, also the JSON key: "events"
  std::string metric;  // Prometheus name: "eacgm_events_total"
  std::string help;
  std::string unit;  // base unit ("bytes", "seconds") or "" for a count
  CounterKind kind = CounterKind::kCounter;
  CounterShow show = CounterShow::kAlways;
  std::string group;  // for kGroup
};

struct CounterValue {
  std::shared_ptr<const CounterDef> def;
  std::uint64_t value = 0;
};

// One reading of every counter, in declaration order.
struct CounterValues {
  std::vector<CounterValue> values;

  // 0 when no counter has that key.
  std::uint64_t get(std::string_view key) const;
  bool has(std::string_view key) const;
  // "events=.. drops=.. ..." by each counter's CounterShow.
  std::string accounting_line() const;
};

class CounterRegistry {
 public:
  // Reads the current value; called from any thread, so it must read atomics or
  // thread-safe state.
  using Read = std::function<std::uint64_t()>;

  // A second counter with the same key replaces the first one's reader (a restarted
  // part registers again) and keeps its place.
  void add(CounterDef def, Read read);
  CounterValues read() const;
  std::vector<std::shared_ptr<const CounterDef>> defs() const;

 private:
  struct Entry {
    std::shared_ptr<const CounterDef> def;
    Read read;
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

}  // namespace eacgm
