// The SQL each store renders from the tables' description (schema.h), in its dialect and
// physical layout: SQLite clusters a table keyed by several columns on its key (WITHOUT
// ROWID) and orders an interval table's key (tier, t_ns, node) for its one node's
// retention; PostgreSQL keeps (tier, node, t_ns) so that a node's rows are one range.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "history/schema.h"

namespace eacgm::history {

enum class Dialect { kSqlite, kPostgres };

// CREATE TABLE IF NOT EXISTS with the columns of `version` and before, and the table's
// indexes of that version and before.
std::string create_table(Dialect d, const Table& t, int version);
// The statements that take a store from version `version - 1` to `version`: the tables
// it adds, the columns it adds to older ones, its indexes.
std::string migration_step(Dialect d, int version);

// PostgreSQL from kPartitionedSince on: an interval table (tiered) is partitioned by tier
// (LIST) into <table>_t0.._t2, each by day of t_ns (RANGE) into <table>_t<tier>_d<YYYYMMDD>
// (UTC). The day tables are made by a function in the database, ahead by maintenance and
// when a write lands in a day that has none, and dropped whole by retention.
inline constexpr int kTiers = 3;
inline constexpr std::int64_t kDayNs = 24LL * 3600 * 1'000'000'000;
// eacgm_make_days(tables text[], tier int, from bigint, to bigint): makes the day tables of
// `tier` of each of `tables` covering [from, to) that are not there; how many it made.
inline constexpr const char* kMakeDaysFunction = "eacgm_make_days";
// eacgm_drop_days(tables text[], tier int, before bigint): drops the day tables of `tier`
// of each of `tables` that end at or before `before`; how many it dropped.
inline constexpr const char* kDropDaysFunction = "eacgm_drop_days";
// The day tables of every interval table: parameters 1 the tier, 2 from, 3 to (ns).
std::string make_days_sql();
// Drops every interval table's day tables of a tier: parameters 1 the tier, 2 before (ns).
std::string drop_days_sql();

// The key in the dialect's physical order.
std::vector<std::string_view> physical_key(Dialect d, const Table& t);
// "a, b, c": every column of `t`, in order (its rows' order: schema_rows.h).
std::string column_list(const Table& t);
// The columns of `t` from `from` on, each prefixed with `alias` and "." when not empty.
std::string column_list(const Table& t, std::string_view from, std::string_view alias = {});

// One row of `t` (every column, parameters in order). A row of a key already there
// replaces it (replace_on_write) or combines with it column by column (Combine).
std::string insert_row(Dialect d, const Table& t);
// "$1, $2, ..." (SQLite: "?, ?, ..."): a parameter for each column of `t`.
std::string values_list(Dialect d, const Table& t);
// PostgreSQL's COPY of every column of `t`, binary.
std::string copy_sql(const Table& t);

// How column `c` of `t` combines where an inserted row meets one there ("c = ..."); empty
// where the row there keeps its value.
std::string on_conflict(Dialect d, const Table& t, const Column& c);
// Column `c`'s value over a group of rows of `t` (alias `alias`): SUM, MAX, the
// sample-weighted mean, the merged sketch (SQLite).
std::string aggregate(Dialect d, const Table& t, const Column& c, std::string_view alias);
// The aggregates of every column of `t` from `from` on, "AS c<first>", "AS c<first+1>"...
// when `first` >= 0.
std::string aggregates(Dialect d, const Table& t, std::string_view from, std::string_view alias,
                       int first = -1);

// Rolls `t`'s rows of one node up into the next tier, in SQL: parameter 1 the tier read,
// 2 the node, 3 and 4 the range of t_ns, 5 the span made, 6 the tier made. Rows rolled
// again onto rolled ones combine as on_conflict says.
std::string roll_up_sql(Dialect d, const Table& t);

// The points of GPUs: the gpus rows that `where` keeps (alias t) per node, GPU and step of
// `step` (SQL, used twice), as get_gpu_point (schema_rows.h) reads them.
std::string gpu_points_sql(Dialect d, std::string_view step, std::string_view where);

// Every column of `t` as read back (alias `alias`), names in place of their ids.
std::string read_columns(const Table& t, std::string_view alias);
// The name of the id in `expr`.
std::string name_by_id(std::string_view expr);

}  // namespace eacgm::history
