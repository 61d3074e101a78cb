// What the HTTP server counts (atomics it bumps as it serves), and their registration
// as eacgm_http_* and eacgm_sse_* counters.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/counter_registry.h"
#include "server/request_reader.h"

namespace eacgm::server {

class SseChannel;

// What the server counts, as atomics (see register_http_counters).
struct HttpCounters {
  std::atomic<std::uint64_t> requests{0};      // responses sent, every status
  std::atomic<std::uint64_t> bad_requests{0};  // every 4xx
  std::atomic<std::uint64_t> unauthorized{0};
  std::atomic<std::uint64_t> not_found{0};
  std::atomic<std::uint64_t> method_not_allowed{0};
  std::atomic<std::uint64_t> too_large{0};           // 413, 414, 431
  std::atomic<std::uint64_t> overloaded{0};          // 503 by the client cap
  std::atomic<std::uint64_t> handler_errors{0};      // 500: a handler threw
  std::atomic<std::uint64_t> active_connections{0};  // requests on workers now
  ReaderCounters connections;                        // open connections, and those closed by deadline or cap
};

// The counters in a CounterRegistry (names and help from export/metrics_table); they
// must outlive the registry's readers.
void register_http_counters(CounterRegistry& registry, const HttpCounters& counters);

// Also used by the SSE counters: eacgm_sse_* for one channel.
void register_sse_counters(CounterRegistry& registry, const SseChannel& channel);

}  // namespace eacgm::server
