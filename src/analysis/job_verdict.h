// JobVerdict: the hang verdict of a whole job, across its nodes. Each node's agent writes
// where its NCCL ranks stand (analysis/nccl_progress.h) into the fleet's store's
// nccl_standings; this reads this node's standings with the other nodes' rows of the same
// communicators (as the agent's fleet link last read them, history/fleet_link.h) and says
// per communicator, in the numbering every node shares (the communicator's n-th
// collective, of any kind):
//
// - its oldest open instance: the lowest number some known rank entered and another did
//   not; with every known rank at one number, the one they are all inside while a rank of
//   the communicator is reported by no agent;
// - the ranks in it and those that never entered it, each with its node, and the ranks no
//   agent reports (a node whose rows are older than the stale limit reports nothing);
// - once a rank in it has waited at least [hangs] min_age_s, a verdict ("rank 3 on node b
//   never entered ncclAllReduce #6; ranks 0-2 on nodes a,b waiting for 34 s"): a hang when
//   a rank is missing or unreported.
//
// A hang lasts while the updates keep finding one on its communicator, and is over at the
// first that does not (the rank arrived, or the job is gone); ended ones are kept (the
// last kKeepEnded) with their span. judge_job() is the merge alone, for `eacgm job`,
// which reads every node's rows from the store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "analysis/nccl_progress.h"

namespace eacgm::analysis {

// One rank as one node's agent reported it.
struct RankReport {
  std::string node;
  std::uint64_t comm_id = 0;
  std::int32_t nranks = -1;
  NcclRankStanding standing;
  std::int64_t written_ns = 0;  // on the store's clock (PostgreSQL: the server's)
  // Read from the store: standing.arrivals are on the store's clock too, put there with
  // the writer's measured offset, and this is that offset's bound (0 on the store's own
  // clock, -1 when the writer had not measured it).
  std::int64_t clock_uncertainty_ns = 0;
};

// What the fleet's store held of the job's nodes at the fleet link's last read.
struct FleetReports {
  std::string node;                  // this node's name in the store
  std::int64_t read_ns = 0;          // the read, on the store's clock
  std::int64_t clock_offset_ns = 0;  // the store's clock minus this node's
  std::uint64_t stale_ns = 0;        // a row older than this reports nothing
  std::vector<RankReport> rows;      // every node's, this node's included
};

struct JobRank {
  std::string node;
  std::int32_t rank = -1;
  std::uint32_t pid = 0;
  std::uint64_t entered = 0;
  std::uint64_t finished = 0;
  std::uint64_t waiting_ns = 0;     // how long its process waits now (a row's wait grown by the row's age)
  std::string collective;           // the last collective it entered ("ncclAllReduce"), "" when none
  std::uint64_t report_age_ns = 0;  // how old its row is (0: this node's own standing)
};

struct JobCommVerdict {
  std::uint64_t comm_id = 0;
  std::int32_t nranks = -1;
  std::string function;                  // the open instance's collective, "" when no rank in it says
  std::uint64_t number = 0;              // its number: the communicator's n-th collective, from 1
  std::uint64_t age_ns = 0;              // the longest wait of a rank in it
  std::vector<JobRank> in;               // ranks that entered it, by rank
  std::vector<JobRank> missing;          // ranks reported that never entered it, by rank
  std::vector<std::int32_t> unreported;  // the communicator's ranks no agent reports
  std::vector<std::string> nodes;        // the nodes reporting its ranks, sorted
  bool hang = false;
  std::uint64_t start_ns = 0;  // hang: when it was first found, less its age then (ns since the epoch)
  std::uint64_t end_ns = 0;    // hang: when an update found it over; 0 while it lasts
  std::string verdict;
};

struct JobVerdictSummary {
  bool shared = false;                        // other nodes are read from a shared store
  std::string node;                           // this node's name there
  std::uint64_t read_age_ns = 0;              // how old the last read of the store was at the last update
  std::size_t other_ranks = 0;                // ranks of other nodes merged at the last update
  std::vector<JobCommVerdict> communicators;  // an open instance waited in past the minimum age, by id
  std::deque<JobCommVerdict> ended;           // hangs over, oldest first
  std::uint64_t total = 0;                    // hangs found since the start
};

// The verdicts over `reports` (every node's rows; one per (comm_id, rank): the caller
// keeps the freshest), with `now_ns` on the rows' clock to age them: each communicator
// with an open instance that a rank in it has waited in for at least `min_age_ns`.
std::vector<JobCommVerdict> judge_job(std::span<const RankReport> reports, std::int64_t now_ns,
                                      std::uint64_t min_age_ns);

class JobVerdict {
 public:
  static constexpr std::size_t kKeepEnded = 256;
  static constexpr std::size_t kMaxRanks = 65536;  // merged per update, the rest left out

  void set_min_age_ns(std::uint64_t ns) { min_age_ns_ = ns; }
  // `local`: this node's standings now; `fleet`: the store's rows as last read (nullptr:
  // no shared store, this node alone); `now_ns` this node's wall clock (ns since the epoch).
  void update(const NcclProgressSummary& local, const FleetReports* fleet, std::uint64_t now_ns);
  const JobVerdictSummary& summary() const { return summary_; }

 private:
  std::uint64_t min_age_ns_ = 5'000'000'000;
  JobVerdictSummary summary_;
  std::map<std::uint64_t, JobCommVerdict> current_;  // hangs by comm id
};

}  // namespace eacgm::analysis
