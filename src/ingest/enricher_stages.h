// The built-in enricher stages: kernel names of launches, NCCL communicators of
// collectives, and the pairing of the python catalog's records into Python calls.
#pragma once

#include <memory>
#include <string>

#include "ingest/enricher.h"
#include "ingest/process_maps.h"

namespace eacgm::ingest {

std::unique_ptr<Enricher> make_nccl_comm_stage();
// `remembered`: mappings kept for processes that may be gone by the time their records
// are decoded (may be null).
std::unique_ptr<Enricher> make_kernel_name_stage(
    std::shared_ptr<const ProcessMapsCache> remembered = nullptr);
// Stream capture and CUDA graphs: captured work is recorded into graphs, and each graph
// launch carries its executable graph's work (ingest/graph_capture.h).
std::unique_ptr<Enricher> make_graph_capture_stage();
// file_filter: a glob on the Python source file ("" passes every file).
std::unique_ptr<Enricher> make_python_pairing_stage(std::string file_filter);

}  // namespace eacgm::ingest
