// The text facts of a process as both stores keep them: each column and the record's
// field it holds. A store keeps a non-empty value over an empty one, so a fact learnt
// once (a pod's name from the kubelet) is never lost to a later row that lacks it.
#pragma once

#include <string>

#include "history/history_batch.h"

namespace eacgm::history {

struct ProcessTextColumn {
  const char* column;
  std::string ProcessRecord::*field;
};

inline constexpr ProcessTextColumn kProcessTextColumns[] = {
    {"comm", &ProcessRecord::comm},
    {"cmdline", &ProcessRecord::cmdline},
    {"container", &ProcessRecord::container},
    {"pod_uid", &ProcessRecord::pod_uid},
    {"pod", &ProcessRecord::pod},
    {"namespace", &ProcessRecord::namespace_},
    {"container_name", &ProcessRecord::container_name},
    {"job", &ProcessRecord::job},
    {"job_step", &ProcessRecord::job_step},
};

}  // namespace eacgm::history
