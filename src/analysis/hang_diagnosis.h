// HangDiagnosis: who is stuck, in which call, for how long, and which rank never arrived.
// Each scan of the calls in flight (analysis/inflight_calls.h) is read together with
// where each rank of each NCCL communicator stands (NcclSkew::progress, the numbering the
// arrival skew matches instances by):
//
// - Per communicator, its oldest open collective instance (entered by some ranks, not by
//   all; a rank inside the collective call now counts as entered): once it is at least
//   the minimum age old ([hangs] min_age_s), the ranks in it, the ranks seen here that
//   never entered it (each with the last collective it entered, and the call it is in
//   now, if any), the communicator's ranks never seen on this node, and a one-line
//   verdict ("rank 1 (pid 4243) never entered ncclAllReduce #18204; rank 0 waiting in it
//   for 94 s").
// - A hang is said by two rules only. The communicator rule: ranks here never entered the
//   oldest open instance while ranks that did are waiting (a thread of theirs listed in
//   flight, or the instance older than [hangs] hang_after_s) and alive. The age rule: a
//   call in flight for longer than [hangs] hang_after_s (0: off), when no communicator
//   hang covers its process. Any other long wait is a wait with its age.
// - A hang lasts while the scans keep finding it (a communicator's by its id, whichever
//   instance is oldest; an age-rule hang by its thread and call), and is over at the
//   first scan that does not: the missing rank arrived, the call returned, or the
//   processes exited. Ended hangs are kept (the last kKeepEnded) with their span.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "analysis/inflight_calls.h"
#include "analysis/nccl_skew.h"
#include "core/python_stack.h"

namespace eacgm::analysis {

struct HangRank {
  std::int32_t rank = -1;
  std::uint32_t pid = 0;
  bool alive = true;              // its process runs
  std::string in_call;            // the oldest call in flight of its process, "" when none listed
  std::uint64_t in_call_ns = 0;   // how long it has been in it
  std::uint32_t in_call_tid = 0;  // the thread in it
  // That thread's Python stack in the call (InflightCall::python_stack), nullptr when not read.
  std::shared_ptr<const PythonStack> python_stack;
  std::string last_entered;       // the last collective it entered, "" when none
  std::uint64_t last_number = 0;  // that collective's number (1-based, per communicator)
};

struct CommDiagnosis {
  std::uint64_t comm_id = 0;
  std::int32_t nranks = -1;
  std::string function;              // the oldest open instance's collective ("ncclAllReduce")
  std::uint64_t number = 0;          // its number: the n-th such collective on the communicator, from 1
  std::uint64_t age_ns = 0;          // since its first rank entered it
  std::vector<HangRank> in;          // ranks that entered it, by rank
  std::vector<HangRank> missing;     // ranks seen here that never entered it, by rank
  std::vector<std::int32_t> unseen;  // the communicator's ranks never seen on this node
  bool hang = false;                 // the communicator rule holds
  std::string verdict;
};

struct Hang {
  std::string rule;            // "communicator" or "age"
  std::uint64_t start_ns = 0;  // ns since the Unix epoch: the instance's first entry, or the call's
  std::uint64_t end_ns = 0;    // when a scan found it over; 0 while it lasts
  std::uint64_t age_ns = 0;    // its length at the last scan that found it (or at its end)
  std::uint64_t comm_id = 0;   // communicator rule
  std::string domain;          // the call's ("nccl" for the communicator rule)
  std::string function;
  std::uint64_t number = 0;                 // communicator rule: the instance's number
  std::uint32_t pid = 0;                    // the first missing rank's process, or the stuck thread's
  std::uint32_t tid = 0;                    // age rule
  std::int32_t rank = -1;                   // the first missing rank, or the stuck process's
  std::vector<std::int32_t> missing_ranks;  // communicator rule
  std::vector<std::int32_t> waiting_ranks;
  // The threads waiting whose Python stack was read: communicator rule, the ranks in a call
  // (those in the instance, then missing ones stuck in another call); age rule, the stuck
  // thread (its rank, pid, call, stack).
  std::vector<HangRank> stacks;
  std::string verdict;
};

struct HangSummary {
  std::vector<CommDiagnosis> communicators;  // with an open instance past the minimum age, by comm id
  std::vector<Hang> current;                 // oldest first
  std::deque<Hang> ended;                    // oldest first
  std::uint64_t total = 0;                   // hangs found since the start
};

class HangDiagnosis {
 public:
  static constexpr std::size_t kKeepEnded = 256;
  // The default [hangs] hang_after_s: NCCL's own watchdog in PyTorch gives up after 10 minutes.
  static constexpr std::uint64_t kDefaultHangAfterNs = 600'000'000'000;
  using ProcessAlive = std::function<bool(std::uint32_t pid)>;

  void set_hang_after_ns(std::uint64_t ns) { hang_after_ns_ = ns; }

  // A scan at `now_ns` (ns since the Unix epoch): `inflight` is its summary (the calls past
  // the minimum age), `comms` where the communicators' ranks stood then.
  void update(std::span<const NcclCommProgress> comms, const InflightSummary& inflight, std::uint64_t now_ns,
              const ProcessAlive& alive);
  const HangSummary& summary() const { return summary_; }

 private:
  std::uint64_t hang_after_ns_ = kDefaultHangAfterNs;
  HangSummary summary_;
  std::map<std::string, Hang> current_;  // by key: "comm:<id>", "call:<pid>:<tid>:<entry>"
};

// "0-4,6,7": runs of three or more as a range.
std::string rank_list(std::span<const std::int32_t> ranks);

}  // namespace eacgm::analysis
