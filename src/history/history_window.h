// The window a history query asks for, as people write it: `since` an age ("90s", "15m",
// "1h", "7d"), or `from`/`until` as Unix seconds, an age back from now, or a UTC time
// ("2026-11-28T10:00:00Z"). Shared by `eacgm history` and /api/v1/history/*.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/result.h"
#include "history/history_query.h"

namespace eacgm::history {

// "90s", "15m", "1h", "7d", "2w" (a number, then s, m, h, d or w) in ns.
Result<std::int64_t> parse_age(const std::string& text);
// Unix seconds (fractions allowed), an age back from `now_ns`, or an ISO 8601 UTC time.
Result<std::int64_t> parse_time(const std::string& text, std::int64_t now_ns);

struct WindowText {
  std::optional<std::string> since, from, until, step;
};
// Default: the last hour. `since` excludes `from`. Errors say which parameter and how.
Result<HistoryQuery> make_window(const WindowText& text, std::int64_t now_ns);

}  // namespace eacgm::history
