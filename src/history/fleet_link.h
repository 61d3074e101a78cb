// FleetLink: what a node's agent writes and reads of the fleet while it runs, on a thread
// and a connection of its own, in the fleet's store: the PostgreSQL of [store] fleet_url
// when the node keeps its own SQLite store, else the store of [store] url (a shared
// PostgreSQL; a lone SQLite file is a fleet of one). It writes the agent's row of
// `agents` at its start and once per interval (the heartbeat: where its API answers, its
// version, when it was last seen), and the node's NCCL rank standings in
// `nccl_standings` when they are due (history/standings_schedule.h), reading back every
// node's rows of the same communicators for the job's verdict (analysis/job_verdict.h),
// handed to the fleet sink: each second while a rank waits, here or in the rows last
// read, else once per interval. A fleet store that is away is said once and tried again
// with back-off (1 s doubling to 30 s); the writer and the shipper never wait for it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "analysis/job_verdict.h"
#include "history/store.h"

namespace eacgm::analysis {
struct AnalysisSnapshot;
}  // namespace eacgm::analysis

namespace eacgm::history {

struct FleetLinkOptions {
  std::string node;                            // the node's name in the store
  std::string url;                             // the fleet's store
  std::chrono::milliseconds interval{10'000};  // the heartbeat's period
  std::string agent_url;                       // where the agent's API answers
  std::string version;                         // the agent's build
  // The link's clock (Unix ns); tests simulate it. The agent started at the link's making.
  std::function<std::int64_t()> now_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };
};

// What /metrics says of the link (eacgm_fleet_link_*).
struct FleetLinkStats {
  bool up = false;             // the last round with the fleet's store succeeded
  std::uint64_t failures = 0;  // rounds that failed (each retried after a back-off)
  std::uint64_t standings_writes = 0;
  std::uint64_t standings_reads = 0;
  double last_heartbeat_unix = 0;  // 0: none yet
};

class FleetLink {
 public:
  using Source = std::function<std::shared_ptr<const analysis::AnalysisSnapshot>()>;
  using Log = std::function<void(const std::string&)>;
  using FleetSink = std::function<void(std::shared_ptr<const analysis::FleetReports>)>;
  // Opens the store a URL names (tests hand a store that fails on demand).
  using Opener = std::function<Result<std::unique_ptr<Store>>(const std::string& url)>;

  FleetLink(FleetLinkOptions options, Source source, Log log, Opener opener = {});
  ~FleetLink();
  FleetLink(const FleetLink&) = delete;
  FleetLink& operator=(const FleetLink&) = delete;

  // Where the agent's API answers, once its port is known (before start()).
  void set_agent_url(std::string url) { options_.agent_url = std::move(url); }
  // Where the job's rows of every node go after each read (before start()).
  void set_fleet_sink(FleetSink sink) { sink_ = std::move(sink); }
  void start();
  void stop();

  // One second's round, on the caller's thread (tests; the thread's own): the store
  // opened when it is not, the heartbeat when due, the standings when due.
  void poll_once();

  FleetLinkStats stats() const;
  // The fleet store's URL without its password.
  std::string description() const { return description_; }

 private:
  void run();
  Status round(std::int64_t now);
  Status heartbeat(std::int64_t now);
  Status poll_standings(const analysis::AnalysisSnapshot& snap, std::int64_t now);

  FleetLinkOptions options_;
  Source source_;
  Log log_;
  Opener opener_;
  FleetSink sink_;
  std::string description_;
  std::int64_t started_ns_ = 0;
  std::unique_ptr<Store> store_;

  std::int64_t heartbeat_ns_ = 0;                // the link's clock; 0: none yet
  std::vector<analysis::RankReport> standings_;  // as last written
  std::int64_t standings_written_ns_ = 0;
  std::int64_t standings_read_ns_ = 0;
  bool read_waiting_ = false;  // a rank waits in the rows last read

  bool failing_ = false;
  std::int64_t retry_at_ns_ = 0;
  std::int64_t backoff_ns_ = 0;

  mutable std::mutex mutex_;  // stats_ and the wake-ups
  FleetLinkStats stats_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace eacgm::history
