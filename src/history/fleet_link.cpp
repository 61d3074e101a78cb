// The fleet link's rounds: the store opened, the heartbeat, the node's NCCL standings
// written and the job's read back when due; a failed round said once and retried.
#include "history/fleet_link.h"

#include <algorithm>

#include "analysis/analysis_snapshot.h"
#include "analysis/nccl_progress.h"
#include "history/standings_schedule.h"
#include "history/store_url.h"

namespace eacgm::history {
namespace {

// The most rows of the job's communicators read back at once.
constexpr std::size_t kMaxFleetRows = 65536;
constexpr std::int64_t kFirstBackoffNs = 1'000'000'000;
constexpr std::int64_t kMaxBackoffNs = 30'000'000'000;

// The same ranks at the same numbers (their waits aside: they grow each second).
bool same_standings(const std::vector<analysis::RankReport>& a, const std::vector<analysis::RankReport>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
    return x.comm_id == y.comm_id && x.nranks == y.nranks && x.standing.rank == y.standing.rank &&
           x.standing.pid == y.standing.pid && x.standing.entered == y.standing.entered &&
           x.standing.finished == y.standing.finished &&
           (x.standing.waiting_ns == 0) == (y.standing.waiting_ns == 0);
  });
}

bool any_waiting(const std::vector<analysis::RankReport>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.standing.waiting_ns > 0; });
}

}  // namespace

FleetLink::FleetLink(FleetLinkOptions options, Source source, Log log, Opener opener)
    : options_(std::move(options)),
      source_(std::move(source)),
      log_(std::move(log)),
      opener_(std::move(opener)),
      description_(redact_store_url(options_.url)),
      started_ns_(options_.now_ns()) {
  if (!opener_) opener_ = [](const std::string& url) { return open_store(url, StoreAccess::kWrite); };
}

FleetLink::~FleetLink() {
  try {
    stop();
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw
  }
}

void FleetLink::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { run(); });
}

void FleetLink::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) return;
    stop_ = true;
    wake_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
}

FleetLinkStats FleetLink::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void FleetLink::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    lock.unlock();
    poll_once();
    lock.lock();
    wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; });
  }
}

void FleetLink::poll_once() {
  const std::int64_t now = options_.now_ns();
  if (failing_ && now < retry_at_ns_) return;
  Status st = round(now);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!st) {
    ++stats_.failures;
    stats_.up = false;
    if (!failing_ && log_) log_("fleet link to " + description_ + ": " + st.error() + " (retried)");
    failing_ = true;
    backoff_ns_ = backoff_ns_ == 0 ? kFirstBackoffNs : std::min(backoff_ns_ * 2, kMaxBackoffNs);
    retry_at_ns_ = now + backoff_ns_;
    return;
  }
  if (failing_ && log_) log_("fleet link to " + description_ + ": answering again");
  failing_ = false;
  backoff_ns_ = 0;
  stats_.up = true;
}

Status FleetLink::round(std::int64_t now) {
  if (!store_) {
    auto store = opener_(options_.url);
    if (!store) return make_error("connecting failed: " + store.error());
    store_ = std::move(store).value();
  }
  const auto interval_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.interval).count();
  // After a failure the heartbeat goes first: the agent is seen as soon as the store is back.
  if (heartbeat_ns_ == 0 || failing_ || now - heartbeat_ns_ >= interval_ns) {
    if (auto st = heartbeat(now); !st) return st;
  }
  auto snap = source_ ? source_() : nullptr;
  if (snap && sink_) return poll_standings(*snap, now);
  return {};
}

Status FleetLink::heartbeat(std::int64_t now) {
  StoredAgent a;
  a.node = options_.node;
  a.url = options_.agent_url;
  a.version = options_.version;
  a.started_ns = started_ns_;
  a.last_seen_ns = now;
  a.every_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.interval).count();
  if (auto st = store_->put_agent(a); !st) return make_error("writing the agent's row failed: " + st.error());
  heartbeat_ns_ = now;
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.last_heartbeat_unix = static_cast<double>(now) / 1e9;
  return {};
}

Status FleetLink::poll_standings(const analysis::AnalysisSnapshot& snap, std::int64_t now) {
  const auto clock = store_->clock();
  const std::int64_t offset = clock ? clock->offset_ns : 0;
  const std::int64_t at = now + offset;  // on the store's clock
  std::vector<analysis::RankReport> rows;
  std::vector<std::uint64_t> comms;
  for (const analysis::NcclCommStanding& c : snap.get<analysis::NcclProgressSummary>().comms) {
    comms.push_back(c.comm_id);
    for (const analysis::NcclRankStanding& r : c.ranks)
      rows.push_back({options_.node, c.comm_id, c.nranks, r, at, 0});
  }
  const auto interval_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(options_.interval).count();
  StandingsMoment m;
  m.has_rows = !rows.empty();
  m.had_rows = !standings_.empty();
  m.changed = !same_standings(rows, standings_);
  m.waiting_here = any_waiting(rows);
  m.waiting_read = read_waiting_;
  m.since_written_ns = now - standings_written_ns_;
  m.since_read_ns = now - standings_read_ns_;
  m.interval_ns = interval_ns;
  const StandingsDue due = standings_due(m);
  if (due.write) {
    if (auto st = store_->write_standings(options_.node, rows, at); !st)
      return make_error("writing NCCL standings failed: " + st.error());
    standings_ = rows;
    standings_written_ns_ = now;
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.standings_writes;
  }
  if (!due.read && !comms.empty()) return {};  // the last read stands
  auto fleet = std::make_shared<analysis::FleetReports>();
  fleet->node = options_.node;
  fleet->read_ns = at;
  fleet->clock_offset_ns = offset;
  // A node's rows are written at least each interval: three missed, it reports nothing.
  fleet->stale_ns = static_cast<std::uint64_t>(std::max<std::int64_t>(3 * interval_ns, 5'000'000'000));
  if (!comms.empty()) {
    auto read = store_->standings(comms, at - static_cast<std::int64_t>(fleet->stale_ns), kMaxFleetRows);
    if (!read) return make_error("reading the job's NCCL standings failed: " + read.error());
    fleet->rows = std::move(*read);
    standings_read_ns_ = now;
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.standings_reads;
  }
  read_waiting_ = any_waiting(fleet->rows);
  sink_(std::move(fleet));
  return {};
}

}  // namespace eacgm::history
