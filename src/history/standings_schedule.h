// When the fleet link (history/fleet_link.h) writes the node's NCCL rank standings and
// reads the job's rows back: each second while a rank waits (here, or in the rows it last
// read) or the node's ranks changed, else once per interval, so that an agent of a job
// that runs reads the fleet's store once an interval, not each second.
#pragma once

#include <cstdint>

namespace eacgm::history {

// While a rank waits, the most often the standings are written and read (a poll is about
// a second, a little less after a slow one).
inline constexpr std::int64_t kStandingsEveryNs = 900'000'000;

// What a poll knows.
struct StandingsMoment {
  bool has_rows = false;      // the node has NCCL ranks now
  bool had_rows = false;      // it had ranks at its last write (their rows are in the store)
  bool changed = false;       // its ranks stand otherwise than at its last write
  bool waiting_here = false;  // one of its ranks waits
  bool waiting_read = false;  // a rank waits in the rows it last read
  std::int64_t since_written_ns = 0;
  std::int64_t since_read_ns = 0;
  std::int64_t interval_ns = 0;
};

struct StandingsDue {
  bool write = false;
  bool read = false;
};

constexpr StandingsDue standings_due(const StandingsMoment& m) {
  const bool urgent_write = m.changed || m.waiting_here;
  const bool urgent_read = m.changed || m.waiting_here || m.waiting_read;
  StandingsDue due;
  due.write = (m.has_rows || m.had_rows) && ((urgent_write && m.since_written_ns >= kStandingsEveryNs) ||
                                             m.since_written_ns >= m.interval_ns);
  // Only a node with ranks asks for its communicators' rows.
  due.read = m.has_rows &&
             ((urgent_read && m.since_read_ns >= kStandingsEveryNs) || m.since_read_ns >= m.interval_ns);
  return due;
}

}  // namespace eacgm::history
