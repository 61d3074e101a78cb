// Events and snapshots for the history's tests: probes of a test library, calls of known
// durations, and a snapshot whose per-process summaries hold them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "analysis/analysis_snapshot.h"
#include "analysis/process_calls.h"

namespace eacgm::history::test {

inline std::shared_ptr<const ProbeInfo> probe(const std::string& domain, const std::string& function) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->symbol = function;
  p->library = "/usr/lib/libtest.so";
  p->spec.name = function;
  p->spec.domain = domain;
  p->spec.ret = ReturnKind::kInt32;
  p->spec.with_exit = true;
  return p;
}

inline CallEvent call(const std::shared_ptr<const ProbeInfo>& p, std::uint32_t pid, std::uint64_t dur_ns,
                      std::int64_t ret = 0) {
  CallEvent e;
  e.probe = p;
  e.pid = pid;
  e.tid = pid;
  e.has_exit = true;
  e.dur_ns = dur_ns;
  e.ret = ret;
  return e;
}

// A snapshot holding `calls`' current view (and nothing else).
inline analysis::AnalysisSnapshot snapshot_of(analysis::ProcessCalls& calls) {
  analysis::AnalysisSnapshot snap;
  snap.parts.put<analysis::ProcessCallsView>(calls.view());
  return snap;
}

}  // namespace eacgm::history::test
