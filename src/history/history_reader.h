// HistoryReader: queries a store from any thread (HTTP handlers, the CLI): one
// connection, opened at the first query and again after a failure, used under a mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "history/store.h"

namespace eacgm::history {

class HistoryReader {
 public:
  HistoryReader(std::string url, Retention retention);

  // Runs `fn` with the store and the tier the query's window is answered from.
  template <typename T>
  Result<T> query(const HistoryQuery& q, const std::function<Result<T>(Store&, Tier)>& fn) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto st = ensure_open(); !st) return std::move(st).take_error();
    const Tier tier = store_->tier_for(q, now_ns(), retention_);
    auto r = fn(*store_, tier);
    if (!r) store_.reset();  // the next query opens a fresh connection
    return r;
  }
  const std::string& url() const { return url_; }
  const Retention& retention() const { return retention_; }

 private:
  Status ensure_open();
  static std::int64_t now_ns();

  std::string url_;
  Retention retention_;
  std::mutex mutex_;
  std::unique_ptr<Store> store_;
};

}  // namespace eacgm::history
