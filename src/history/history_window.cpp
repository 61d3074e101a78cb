// Windows of time from text.
#include "history/history_window.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <ctime>
#include <string_view>

namespace eacgm::history {
namespace {

constexpr std::int64_t kS = 1'000'000'000;

std::optional<double> number(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(std::string(s), &used);
  } catch (...) {
    return std::nullopt;
  }
  if (used != s.size() || !std::isfinite(v) || v < 0) return std::nullopt;
  return v;
}

}  // namespace

Result<std::int64_t> parse_age(const std::string& text) {
  if (text.size() >= 2) {
    const char unit = text.back();
    double mult = 0;
    switch (unit) {
      case 's':
        mult = 1;
        break;
      case 'm':
        mult = 60;
        break;
      case 'h':
        mult = 3600;
        break;
      case 'd':
        mult = 86400;
        break;
      case 'w':
        mult = 7 * 86400;
        break;
      default:
        break;
    }
    if (auto v = number(std::string_view(text).substr(0, text.size() - 1));
        v && mult > 0 && *v * mult <= 3.2e9) {
      return static_cast<std::int64_t>(*v * mult * static_cast<double>(kS));
    }
  }
  return make_error(ErrorKind::kUsage, "\"" + text + "\" is not an age such as 90s, 15m, 1h or 7d");
}

Result<std::int64_t> parse_time(const std::string& text, std::int64_t now_ns) {
  if (auto v = number(text); v && *v < 1e11) return static_cast<std::int64_t>(*v * static_cast<double>(kS));
  if (auto age = parse_age(text)) return now_ns - *age;
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end != nullptr && (*end == '\0' || std::string_view(end) == "Z")) {
    return static_cast<std::int64_t>(timegm(&tm)) * kS;
  }
  return make_error(ErrorKind::kUsage, "\"" + text +
                                           "\" is not a time: use Unix seconds, an age back from now (1h) or "
                                           "a UTC time such as 2026-11-28T10:00:00Z");
}

Result<HistoryQuery> make_window(const WindowText& text, std::int64_t now_ns) {
  HistoryQuery q;
  q.to_ns = now_ns + 1;
  q.from_ns = now_ns - 3600 * kS;
  if (text.since && text.from) return make_error(ErrorKind::kUsage, "since and from: give one of them");
  if (text.since) {
    auto age = parse_age(*text.since);
    if (!age) return make_error(ErrorKind::kUsage, "since: " + age.error());
    q.from_ns = now_ns - *age;
  }
  if (text.from) {
    auto t = parse_time(*text.from, now_ns);
    if (!t) return make_error(ErrorKind::kUsage, "from: " + t.error());
    q.from_ns = *t;
  }
  if (text.until) {
    auto t = parse_time(*text.until, now_ns);
    if (!t) return make_error(ErrorKind::kUsage, "until: " + t.error());
    q.to_ns = *t;
  }
  if (q.to_ns <= q.from_ns) return make_error(ErrorKind::kUsage, "the window ends before it starts");
  if (text.step) {
    auto step = parse_age(*text.step);
    if (!step) return make_error(ErrorKind::kUsage, "step: " + step.error());
    if (*step < kS) return make_error(ErrorKind::kUsage, "step: at least 1s");
    q.step_ns = *step;
  } else {
    // About 240 points over the window, in whole minutes.
    q.step_ns = std::max<std::int64_t>(60 * kS, ((q.to_ns - q.from_ns) / 240 / (60 * kS)) * 60 * kS);
  }
  return q;
}

Result<std::size_t> parse_limit(const std::string& text) {
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1 || v > kMaxPageRows) {
    return make_error(ErrorKind::kUsage,
                      fmt::format("\"{}\" is not a number from 1 to {}", text, kMaxPageRows));
  }
  return v;
}

std::string page_cursor(const HistoryQuery& q, std::size_t offset) {
  return fmt::format("{}.{}.{}", offset, q.from_ns, q.to_ns);
}

Status apply_cursor(const std::string& cursor, HistoryQuery& q) {
  // offset.from_ns.to_ns
  std::int64_t parts[3] = {};
  const char* at = cursor.data();
  const char* end = cursor.data() + cursor.size();
  bool ok = true;
  for (int i = 0; i < 3 && ok; ++i) {
    const auto r = std::from_chars(at, end, parts[i]);
    ok = r.ec == std::errc() && (i < 2 ? r.ptr != end && *r.ptr == '.' : r.ptr == end);
    at = r.ptr + 1;
  }
  if (!ok || parts[0] < 0 || parts[2] <= parts[1]) {
    return make_error(ErrorKind::kUsage,
                      "\"" + cursor + "\" is not a cursor this agent gave (the \"next\" of a page)");
  }
  q.offset = static_cast<std::size_t>(parts[0]);
  q.from_ns = parts[1];
  q.to_ns = parts[2];
  return {};
}

}  // namespace eacgm::history
