// A real store that refuses writes and reads while `down` (as a PostgreSQL server that
// went away would): the stand-in for an unreachable store in the writer's and the fleet
// link's tests.
#pragma once

#include <memory>
#include <string>

#include "history/store.h"

namespace eacgm::history::test {

class RefusingStore final : public Store {
 public:
  explicit RefusingStore(std::unique_ptr<Store> real) : real_(std::move(real)) {}
  bool down = false;
  Status write(const std::string& node, const IntervalBatch& b) override {
    if (down) return make_error("connection refused");
    return real_->write(node, b);
  }
  Status maintain(const std::string& node, std::int64_t now, const Retention& r) override {
    return real_->maintain(node, now, r);
  }
  Result<ProcessPage> processes(const HistoryQuery& q, Tier t) override { return real_->processes(q, t); }
  Result<Page<StoredJob>> jobs(const HistoryQuery& q, Tier t) override { return real_->jobs(q, t); }
  Result<std::vector<HeldGpuRow>> held_gpus(const HistoryQuery& q, const JobSelector& s, Tier t) override {
    return real_->held_gpus(q, s, t);
  }
  Result<JobTimeRows> job_time_rows(const HistoryQuery& q, const JobSelector& s, Tier t) override {
    return real_->job_time_rows(q, s, t);
  }
  Result<Page<StoredNode>> nodes(const HistoryQuery& q, Tier t) override { return real_->nodes(q, t); }
  Result<std::vector<StoredFunction>> functions(const HistoryQuery& q, Tier t) override {
    return real_->functions(q, t);
  }
  Result<std::vector<StoredKernel>> kernels(const HistoryQuery& q, Tier t) override {
    return real_->kernels(q, t);
  }
  Result<std::vector<StoredGpuPoint>> gpus(const HistoryQuery& q, Tier t) override {
    return real_->gpus(q, t);
  }
  Result<Page<StoredAnomaly>> anomalies(const HistoryQuery& q) override { return real_->anomalies(q); }
  Result<Page<StoredLeak>> leaks(const HistoryQuery& q) override { return real_->leaks(q); }
  Status write_standings(const std::string& node, std::span<const analysis::RankReport> rows,
                         std::int64_t written_ns) override {
    if (down) return make_error("connection refused");
    return real_->write_standings(node, rows, written_ns);
  }
  Result<std::vector<analysis::RankReport>> standings(std::span<const std::uint64_t> comm_ids,
                                                      std::int64_t since_ns, std::size_t limit) override {
    if (down) return make_error("connection refused");
    return real_->standings(comm_ids, since_ns, limit);
  }
  Status put_agent(const StoredAgent& agent) override {
    if (down) return make_error("connection refused");
    return real_->put_agent(agent);
  }
  Result<AgentList> agents() override {
    if (down) return make_error("connection refused");
    return real_->agents();
  }
  Result<std::uint64_t> size_bytes() override { return real_->size_bytes(); }
  std::string description() const override { return real_->description(); }

 private:
  std::unique_ptr<Store> real_;
};

}  // namespace eacgm::history::test
