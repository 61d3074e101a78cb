// The sums an interval's function rows add up to, written beside them (schema.h's
// process_totals and function_totals): per process its calls and errors, GPU time left
// out (the process lists' calls); per (domain, function) every process's rows together,
// latency sketches merged (the functions list). A window's lists then read one row per
// process or per function and interval instead of one per both.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "history/function_sums.h"
#include "history/history_batch.h"

namespace eacgm::history {

struct ProcessTotalRecord {
  ProcessKey process;
  std::uint64_t calls = 0;
  std::uint64_t errors = 0;
};

// `Name`: how the rows name domains and functions (text in a batch, ids in PostgreSQL).
template <class Name>
struct FunctionTotalRecord {
  Name domain{};
  Name function{};
  FunctionSums sums;
};

template <class Name>
struct IntervalTotals {
  std::vector<ProcessTotalRecord> processes;
  std::vector<FunctionTotalRecord<Name>> functions;
};

template <class Name>
class TotalsBuilder {
 public:
  // One function row of the interval; `gpu_time`: of kGpuTimeDomain (not a call).
  void add(const ProcessKey& process, const Name& domain, const Name& function, bool gpu_time,
           const FunctionSums& sums) {
    if (!gpu_time) {
      ProcessTotalRecord& p = processes_[process];
      p.process = process;
      p.calls += sums.calls;
      p.errors += sums.errors;
    }
    functions_[{domain, function}].add(sums);
  }
  IntervalTotals<Name> take() {
    IntervalTotals<Name> out;
    out.processes.reserve(processes_.size());
    for (auto& [key, p] : processes_) out.processes.push_back(p);
    out.functions.reserve(functions_.size());
    for (auto& [key, sums] : functions_) out.functions.push_back({key.first, key.second, std::move(sums)});
    processes_.clear();
    functions_.clear();
    return out;
  }

 private:
  std::map<ProcessKey, ProcessTotalRecord> processes_;
  std::map<std::pair<Name, Name>, FunctionSums> functions_;
};

// The totals of a batch's function rows, by name.
inline IntervalTotals<std::string> totals_of(const std::vector<FunctionRecord>& functions) {
  TotalsBuilder<std::string> b;
  for (const auto& f : functions) {
    b.add(f.process, f.domain, f.function, f.domain == kGpuTimeDomain, FunctionSums::of(f));
  }
  return b.take();
}

}  // namespace eacgm::history
