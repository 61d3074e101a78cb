// The built-in enricher stages: kernel names of launches, NCCL communicators of
// collectives, and the pairing of the python catalog's records into Python calls.
#pragma once

#include <memory>
#include <string>

#include "ingest/enricher.h"

namespace eacgm::ingest {

std::unique_ptr<Enricher> make_nccl_comm_stage();
std::unique_ptr<Enricher> make_kernel_name_stage();
// file_filter: a glob on the Python source file ("" passes every file).
std::unique_ptr<Enricher> make_python_pairing_stage(std::string file_filter);

}  // namespace eacgm::ingest
