// HistoryReader: queries a store from any thread (HTTP handlers, the CLI) through a
// bounded pool of connections: a query takes an idle one, or opens another up to the
// bound, so a slow query never holds up another (SQLite readers in WAL mode block neither
// the writer nor each other; PostgreSQL serves each connection on its own backend). A
// connection that failed a query is closed; the next query opens a fresh one.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "history/store.h"

namespace eacgm::history {

class HistoryReader {
 public:
  // Opens a connection to the store `url` names (tests put slow or failing stores here).
  using Opener = std::function<Result<std::unique_ptr<Store>>(const std::string& url)>;
  // As many as the server's workers (ServerOptions::max_clients): no request waits for
  // a connection.
  static constexpr std::size_t kDefaultConnections = 8;

  // The store is opened for reading: a store that is not there is an error, never made.
  HistoryReader(std::string url, Retention retention, std::size_t max_connections = kDefaultConnections,
                Opener opener = {});
  HistoryReader(const HistoryReader&) = delete;
  HistoryReader& operator=(const HistoryReader&) = delete;

  // Runs `fn` with a connection of its own and the tier the query's window is answered
  // from; waits only when `max_connections` queries run already.
  template <typename T>
  Result<T> query(const HistoryQuery& q, const std::function<Result<T>(Store&, Tier)>& fn) {
    auto store = acquire();
    if (!store) return std::move(store).take_error();
    const Tier tier = (*store)->tier_for(q, now_ns(), retention_);
    auto r = fn(**store, tier);
    release(std::move(store).value(), static_cast<bool>(r));
    return r;
  }
  const std::string& url() const { return url_; }
  const Retention& retention() const { return retention_; }
  // Connections open now, idle or in use.
  std::size_t connections() const;

 private:
  Result<std::unique_ptr<Store>> acquire();
  void release(std::unique_ptr<Store> store, bool healthy);
  static std::int64_t now_ns();

  std::string url_;
  Retention retention_;
  std::size_t max_connections_;
  Opener opener_;
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::vector<std::unique_ptr<Store>> idle_;
  std::size_t open_ = 0;  // idle ones and those lent out, and those being opened
};

}  // namespace eacgm::history
