// eacgm_store_*: the history writer's health (written, failed, spooled, dropped, size).
#pragma once

#include "core/prometheus_text.h"
#include "history/history_writer.h"

namespace eacgm::exporting {

void append_store_metrics(ExpositionWriter& out, const history::StoreStats& stats);

}  // namespace eacgm::exporting
