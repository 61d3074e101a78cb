// The Python profile's families of /metrics: how far back it reaches, what it holds and
// what its caps kept out. Per-function shares stay in /api/v1/python: a function label
// would start new series whenever the ranking changes.
#pragma once

#include "analysis/python_profile.h"
#include "core/prometheus_text.h"

namespace eacgm::exporting {

// Nothing when the sampler is off (a rate of 0).
void append_python_metrics(ExpositionWriter& out, const analysis::PythonHotSpots& hot);

}  // namespace eacgm::exporting
