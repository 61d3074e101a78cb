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

// The rows of a page, 1 to kMaxPageRows.
Result<std::size_t> parse_limit(const std::string& text);
// Where the page after `q`'s starts (`offset`), with `q`'s window: the next page is of
// the same window however time moves. Opaque to clients ("next" in the API).
std::string page_cursor(const HistoryQuery& q, std::size_t offset);
// Sets `q`'s window and offset from a cursor page_cursor made.
Status apply_cursor(const std::string& cursor, HistoryQuery& q);

}  // namespace eacgm::history
