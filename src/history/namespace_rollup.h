// The namespace report's rollup (schema.h: namespace_gpus), PostgreSQL's: made from a
// node's hours in the job rollups (job_rollup.h) with its processes' namespaces and jobs,
// in the transaction that makes those, so that `eacgm report --namespace N` over weeks
// reads one row per job, node, GPU and hour, each already combined as the report combines
// the job's processes on a GPU (job_report.cpp: HeldInterval), without the processes'
// rows or their join. A row's job is as the report names it: the job id, else
// "namespace/pod".
#pragma once

#include <string>
#include <string_view>

namespace eacgm::history {

// Deletes a node's rows in [from, to): parameters 1 node, 2 from, 3 to.
std::string namespace_delete_sql();
// Fills the rows from job_gpus rows of tier 2 that `where` keeps (alias t; it may name
// parameters): one per (node, hour, namespace, job, GPU) of the processes with a namespace.
std::string namespace_roll_sql(std::string_view where);
// The rows of a node in [from, to): parameters 1 node, 2 from, 3 to.
std::string namespace_roll_node_sql();

}  // namespace eacgm::history
