// The history's reading side.
#include "history/history_reader.h"

#include <chrono>

namespace eacgm::history {

HistoryReader::HistoryReader(std::string url, Retention retention)
    : url_(std::move(url)), retention_(retention) {}

Status HistoryReader::ensure_open() {
  if (store_) return {};
  auto s = open_store(url_);
  if (!s) return std::move(s).take_error();
  store_ = std::move(s).value();
  return {};
}

std::int64_t HistoryReader::now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace eacgm::history
