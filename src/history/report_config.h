// [report]: what `eacgm report` and /api/v1/history/report price a GPU-hour at and when
// a GPU a job holds counts as idle (docs/job-report.md).
#pragma once

#include "history/job_report.h"

namespace eacgm {
class ConfigSections;
}  // namespace eacgm

namespace eacgm::history {

// Adds [report] to the file's sections, read into `report`.
void add_report_section(ConfigSections& sections, ReportOptions& report);

}  // namespace eacgm::history
