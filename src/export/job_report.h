// A job report (history/job_report.h) as people and programs read it: a text table for
// `eacgm report`, CSV (--csv), and the JSON of /api/v1/history/report and --json.
#pragma once

#include <optional>
#include <string>

#include "history/job_report.h"

namespace eacgm::exporting {

// The share of a job's held time idle (0..1); none for a job that held nothing.
std::optional<double> idle_share(const history::JobReportRow& r);

// {"window":{"from_ns","to_ns","tier"[,"node"]},"selector":{"by","value"},
//  "idle_threshold","gpu_hour_price","currency","jobs":[{"job","nodes","gpus","gpu_hours",
//  "active_gpu_hours","idle_gpu_hours","unmeasured_gpu_hours","idle_share",
//  "longest_idle_s","activity_basis","tensor_active_mean","memory_peak_bytes",
//  "memory_capacity_bytes","energy_kwh","energy_basis","share_basis","cost","idle_cost",
//  "first_ns","last_ns","time":{"wall_s","wall_basis","processes","host_wait_s",
//  "host_wait_share","host_waits":[{"kind","calls","seconds","share","estimated"}],
//  "gpu_time_measured","gpu_s","gpu_timed_launches","nccl_gpu_s","nccl_share",
//  "nccl_timed_launches","top_kernels":[{"name","launches","timed","gpu_s","share"}]}}]}.
std::string job_report_json(const history::JobReport& report);
// One line per job after a header, the JSON's columns in its order (lists ";"-joined).
std::string job_report_csv(const history::JobReport& report);
// The table, most idle GPU-hours first, then what the figures mean.
std::string job_report_text(const history::JobReport& report);

}  // namespace eacgm::exporting
