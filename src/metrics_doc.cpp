// eacgm-metrics-doc: prints docs/metrics.md, generated from the metrics table
// (src/export/metrics_table.cpp). Usage: build/eacgm-metrics-doc > docs/metrics.md
#include <cstdio>

#include "export/metrics_table.h"

int main() {
  const std::string doc = eacgm::exporting::render_metrics_doc();
  return std::fwrite(doc.data(), 1, doc.size(), stdout) == doc.size() ? 0 : 1;
}
