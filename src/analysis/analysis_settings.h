// AnalysisSettings: what a job sets of its analyses (from [python] and [hangs], and the
// job's kind): given to every registered analysis before the trace starts and again after
// a daemon's reload; each reads the fields that concern it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "analysis/hang_diagnosis.h"
#include "analysis/inflight_calls.h"
#include "analysis/nccl_flight_recorder.h"
#include "analysis/python_profile.h"

namespace eacgm::analysis {

struct AnalysisSettings {
  std::uint32_t python_hz = 0;          // the Python sampler's rate, which the hot spots state
  PythonProfileLimits python_limits{};  // what the Python profile keeps (a window for the daemon)
  // A waiting call in flight is listed from this age ([hangs] min_age_s).
  std::uint64_t inflight_min_age_ns = InflightCalls::kDefaultMinAgeNs;
  // A call in flight this long is a hang whatever it waits for ([hangs] hang_after_s; 0: never).
  std::uint64_t hang_after_ns = HangDiagnosis::kDefaultHangAfterNs;
  // The NCCL flight recorder's entries per communicator and rank ([nccl] flight_recorder_entries).
  std::size_t flight_recorder_entries = NcclFlightRecorder::kDefaultEntries;
};

}  // namespace eacgm::analysis
