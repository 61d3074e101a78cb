// The SQLite history's schema, version by version: version 1 made the tables, each
// later version is one step over the one before. A new file takes every step in turn,
// so that a file made by this build and one migrated from an older build are the same.
#pragma once

namespace eacgm::history {

// Version 1. Every table names its node; interval tables carry their tier (0 raw, 1
// minute, 2 hour), start and span. Names (nodes, domains, functions, kernels, GPU
// names and UUIDs) are ids into `names`: a C++ kernel's name is written once, not once
// per interval.
inline constexpr const char* kSqliteSchemaV1 = R"sql(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS processes(
  node INTEGER NOT NULL, pid INTEGER NOT NULL, start_ns INTEGER NOT NULL,
  comm TEXT NOT NULL DEFAULT '', cmdline TEXT NOT NULL DEFAULT '',
  rank INTEGER, local_rank INTEGER, world_size INTEGER,
  container TEXT NOT NULL DEFAULT '', pod TEXT NOT NULL DEFAULT '',
  first_ns INTEGER NOT NULL, last_ns INTEGER NOT NULL, exited INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(node, pid, start_ns)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS processes_last ON processes(last_ns);
CREATE TABLE IF NOT EXISTS intervals(
  node INTEGER NOT NULL, t_ns INTEGER NOT NULL, span_ns INTEGER NOT NULL, mode TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(node, t_ns)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS functions(
  tier INTEGER NOT NULL, node INTEGER NOT NULL, t_ns INTEGER NOT NULL, span_ns INTEGER NOT NULL,
  pid INTEGER NOT NULL, start_ns INTEGER NOT NULL, domain INTEGER NOT NULL, function INTEGER NOT NULL,
  calls INTEGER NOT NULL, errors INTEGER NOT NULL, bytes INTEGER NOT NULL, timed INTEGER NOT NULL,
  estimated INTEGER NOT NULL, calls_variance REAL NOT NULL, latency BLOB,
  PRIMARY KEY(tier, t_ns, node, pid, start_ns, domain, function)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kernels(
  tier INTEGER NOT NULL, node INTEGER NOT NULL, t_ns INTEGER NOT NULL, span_ns INTEGER NOT NULL,
  kernel INTEGER NOT NULL, launches INTEGER NOT NULL,
  PRIMARY KEY(tier, t_ns, node, kernel)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS gpus(
  tier INTEGER NOT NULL, node INTEGER NOT NULL, t_ns INTEGER NOT NULL, span_ns INTEGER NOT NULL,
  gpu INTEGER NOT NULL, uuid INTEGER NOT NULL, name INTEGER NOT NULL, samples INTEGER NOT NULL,
  util_mean REAL, util_max INTEGER, memory_used_mean REAL, memory_used_max INTEGER, memory_total INTEGER,
  power_mean_w REAL, power_max_w REAL, temperature_max INTEGER,
  PRIMARY KEY(tier, t_ns, node, gpu)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS gpu_processes(
  tier INTEGER NOT NULL, node INTEGER NOT NULL, t_ns INTEGER NOT NULL, span_ns INTEGER NOT NULL,
  gpu INTEGER NOT NULL, pid INTEGER NOT NULL, start_ns INTEGER NOT NULL, samples INTEGER NOT NULL,
  memory_max INTEGER, sm_mean REAL,
  PRIMARY KEY(tier, t_ns, node, gpu, pid, start_ns)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS anomalies(
  node INTEGER NOT NULL, t_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, pid INTEGER NOT NULL,
  start_ns INTEGER NOT NULL, kind TEXT NOT NULL, domain INTEGER NOT NULL, function INTEGER NOT NULL,
  score REAL NOT NULL, value REAL NOT NULL, median_ns REAL NOT NULL);
CREATE INDEX IF NOT EXISTS anomalies_t ON anomalies(t_ns);
CREATE TABLE IF NOT EXISTS leaks(
  node INTEGER NOT NULL, t_ns INTEGER NOT NULL, pid INTEGER NOT NULL, start_ns INTEGER NOT NULL,
  device INTEGER NOT NULL, allocations INTEGER NOT NULL, bytes INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS leaks_t ON leaks(t_ns);
)sql";

// Version 2: the workload of each process (history/process_columns.h): its Kubernetes
// pod and container names and its batch job (`pod` was in version 1, never written).
inline constexpr const char* kSqliteSchemaV2 = R"sql(
ALTER TABLE processes ADD COLUMN pod_uid TEXT NOT NULL DEFAULT '';
ALTER TABLE processes ADD COLUMN namespace TEXT NOT NULL DEFAULT '';
ALTER TABLE processes ADD COLUMN container_name TEXT NOT NULL DEFAULT '';
ALTER TABLE processes ADD COLUMN job TEXT NOT NULL DEFAULT '';
ALTER TABLE processes ADD COLUMN job_step TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS processes_job ON processes(job);
)sql";

// Version 3: the PostgreSQL store's node_clocks (each node's clock against the server's).
// A SQLite file is written by one node on its own clock: the table stays empty, there
// so that both stores have the same tables at one version.
inline constexpr const char* kSqliteSchemaV3 = R"sql(
CREATE TABLE IF NOT EXISTS node_clocks(
  node INTEGER NOT NULL PRIMARY KEY, measured_ns INTEGER NOT NULL, offset_ns INTEGER NOT NULL,
  uncertainty_ns INTEGER NOT NULL);
)sql";

// The steps: kSqliteSteps[v - 1] takes a file from version v - 1 to v.
inline constexpr const char* kSqliteSteps[] = {kSqliteSchemaV1, kSqliteSchemaV2, kSqliteSchemaV3};

}  // namespace eacgm::history
