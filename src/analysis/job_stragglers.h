// JobStragglers: which rank of a job keeps arriving last at its collectives, across nodes.
// NcclSkew compares the ranks of one node; here every node's rows of the shared store
// (nccl_standings, analysis/job_verdict.h) are joined by instance: each rank's row keeps
// its starts of some instances (NcclArrival, numbered alike on every rank), put on the
// store's clock by the node's measured offset when written, with that offset's bound.
//
// Per communicator with ranks on two nodes or more, the instances every reported rank
// kept are compared: a rank's lateness at one is its start minus the earliest start. A
// rank is the straggler when it arrived last at more than `min_share` of at least
// `min_instances` instances, and its mean lateness is at least `min_lateness_ns` and more
// than the clocks' bound on the comparison (its node's uncertainty plus the largest of
// the other nodes'): a lateness within the bound is said, not ranked.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "analysis/job_verdict.h"

namespace eacgm::analysis {

struct JobRankLateness {
  std::string node;
  std::int32_t rank = -1;
  std::uint64_t instances = 0;      // compared instances (every reported rank kept them)
  std::uint64_t last = 0;           // of those, the ones it arrived last at
  double mean_lateness_ns = 0;      // its start minus the earliest, on average
  std::int64_t uncertainty_ns = 0;  // the clocks' bound on that; -1: a clock not measured
};

struct JobCommStragglers {
  std::uint64_t comm_id = 0;
  std::vector<std::string> nodes;      // the nodes reporting its ranks, sorted
  std::uint64_t instances = 0;         // compared
  std::vector<JobRankLateness> ranks;  // by rank
  std::int32_t straggler = -1;         // the rank named, -1 when none
  std::string straggler_node;
  std::string verdict;  // what the comparison says, in one line
};

struct JobStragglerOptions {
  double min_share = 0.5;
  std::uint64_t min_instances = 4;
  std::uint64_t min_lateness_ns = 1'000'000;
};

struct JobStragglersSummary {
  std::vector<JobCommStragglers> communicators;  // with ranks on two nodes or more, by id
};

// Over `reports` (every node's rows, one per (comm_id, rank): the freshest).
std::vector<JobCommStragglers> job_stragglers(std::span<const RankReport> reports,
                                              const JobStragglerOptions& options = {});

}  // namespace eacgm::analysis
