// The fleet dashboard's rollup of calls per job (schema.h: job_functions), PostgreSQL's:
// made from a node's hour rows of functions and its processes' jobs, with the job rollups
// (the node's maintenance, or a shipment of its hours), so that a month of the fleet's
// calls per job and function reads a narrow row per (hour, node, job, function) instead of
// each process's row with its latency sketch.
#pragma once

#include <string>
#include <string_view>

namespace eacgm::history {

// Deletes a node's rows in [from, to): parameters 1 node, 2 from, 3 to.
std::string job_functions_delete_sql();
// Fills the rows from the hour rows of functions that `where` keeps (alias t; it may name
// parameters): per (node, hour, job, domain, function) the job's processes that called the
// function, their calls and errors; per (node, hour, job) a row of domain and function 0
// with the job's processes and all their calls and errors but GPU time's launches. A row
// of a process the store does not know is in no job ('').
std::string job_functions_roll_sql(std::string_view where);
// The rows of a node in [from, to): parameters 1 node, 2 from, 3 to.
std::string job_functions_roll_node_sql();

}  // namespace eacgm::history
