// The SQL a window's lists run, the same in both stores and rendered per dialect: the
// nodes a window reads with their marks, the ranges of tiers it is read over
// (tier_ranges.h: whole minutes and hours from their rollups), each process's calls in
// it (from process_totals where they hold every row of the window, else from
// functions), and over those the pages of processes, jobs and nodes, most calls first,
// with the window's count in each row.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "history/history_query.h"
#include "history/schema_sql.h"
#include "history/tier_ranges.h"

namespace eacgm::history {

// SQL with its arguments, each written where it is used ("?" in SQLite, "$n" in
// PostgreSQL, whose lists of ranges are arrays).
struct QuerySql {
  using Arg = std::variant<std::int64_t, std::string, std::vector<std::int64_t>>;
  explicit QuerySql(Dialect d) : dialect(d) {}
  std::string arg(std::int64_t v) { return add(v); }
  std::string arg(std::string v) { return add(std::move(v)); }
  std::string arg(std::vector<std::int64_t> v) { return add(std::move(v)); }

  Dialect dialect;
  std::string text;
  std::vector<Arg> args;

 private:
  std::string add(Arg v);
};

// What a window needs of each node it reads: its rollups (tier_ranges.h), where its rows
// end, and where its rows of the totals tables start (none: it has none).
struct NodeMarks {
  NodeRollups rollups;
  std::int64_t written_to = 0;
  std::optional<std::int64_t> totals_from;
};

// The nodes of `q` (its node, or every node that wrote) with their marks and the oldest
// row of `tier`, as get_node_marks reads each row (the job rollups' mark, then whether
// its rows come rolled up: shipped_to, history/fleet_shipper.h).
QuerySql node_marks_sql(Dialect d, const HistoryQuery& q, Tier tier);
template <class In>
NodeMarks get_node_marks(const In& in) {
  NodeMarks m;
  m.rollups.node = static_cast<std::int32_t>(in.i64(0));
  m.rollups.rolled_1m = in.i64(1);
  m.rollups.rolled_1h = in.i64(2);
  if (!in.is_null(3)) m.rollups.oldest = in.i64(3);
  m.written_to = in.i64(4);
  if (!in.is_null(5)) m.totals_from = in.i64(5);
  m.rollups.rolled_jobs = in.i64(6);
  m.rollups.rollups_only = !in.is_null(7);
  return m;
}

// How a window is read: the ranges of tiers (every node's), and whether the totals
// tables hold every row of it (each node that wrote in it did so with them from before).
struct WindowPlan {
  std::vector<TierRange> ranges;
  bool totals = false;
  // Each node's hours before this are in the job report's rollups (job_report_sql.h).
  std::vector<std::pair<std::int32_t, std::int64_t>> jobs_rolled_to;
};
WindowPlan plan_window(const std::vector<NodeMarks>& nodes, Tier tier, const HistoryQuery& q);

// "WITH r(tier, node, lo, hi) AS (...)": the ranges, the first of a query's WITH list.
std::string ranges_cte(QuerySql& s, const std::vector<TierRange>& ranges);
// `table`'s rows over the ranges `ranges` (a CTE of ranges_cte's columns), as alias `t`
// (a FROM clause).
std::string over_ranges(Dialect d, std::string_view table, std::string_view ranges = "r");

// The lists over a window's processes (each process seen in it, with its calls there).
enum class ProcessList { kProcesses, kJobs, kNodes };
// The page `q` asks of the list: processes (read_columns of processes, then calls,
// errors, and the window's count, running, calls and errors), jobs (get_job) or nodes
// (get_node).
QuerySql process_list_sql(Dialect d, ProcessList list, const HistoryQuery& q, const WindowPlan& plan);

// A page past the window's last row has no row to carry the window's count: then
// `first_page` is asked the first page's (one row).
template <class Fn>
void count_from_first_page(const HistoryQuery& q, bool empty, Fn&& first_page) {
  if (!empty || q.offset == 0) return;
  HistoryQuery first = q;
  first.offset = 0;
  first.limit = 1;
  first_page(first);
}

// Splits a ","-joined list, sorted, each once.
std::vector<std::string> split_list(const std::string& joined);
std::vector<long> split_numbers(const std::string& joined);

// A job's row: job, processes, running, calls, errors, first_ns, last_ns, world_size,
// nodes, ranks and pods (each a ","-joined list), then the window's count of jobs.
template <class In>
StoredJob get_job(const In& in, std::uint64_t& total) {
  StoredJob j;
  j.job = in.text(0);
  j.processes = static_cast<std::uint64_t>(in.i64(1));
  j.running = static_cast<std::uint64_t>(in.i64(2));
  j.calls = static_cast<std::uint64_t>(in.i64(3));
  j.errors = static_cast<std::uint64_t>(in.i64(4));
  j.first_ns = in.i64(5);
  j.last_ns = in.i64(6);
  if (!in.is_null(7)) j.world_size = static_cast<long>(in.i64(7));
  j.nodes = split_list(in.is_null(8) ? std::string() : in.text(8));
  j.ranks = split_numbers(in.is_null(9) ? std::string() : in.text(9));
  j.pods = split_list(in.is_null(10) ? std::string() : in.text(10));
  total = static_cast<std::uint64_t>(in.i64(11));
  return j;
}

// A node's row: node, processes, running, jobs, calls, errors, last_ns, then the
// window's count of nodes.
template <class In>
StoredNode get_node(const In& in, std::uint64_t& total) {
  StoredNode n;
  n.node = in.text(0);
  n.processes = static_cast<std::uint64_t>(in.i64(1));
  n.running = static_cast<std::uint64_t>(in.i64(2));
  n.jobs = static_cast<std::uint64_t>(in.i64(3));
  n.calls = static_cast<std::uint64_t>(in.i64(4));
  n.errors = static_cast<std::uint64_t>(in.i64(5));
  n.last_ns = in.i64(6);
  total = static_cast<std::uint64_t>(in.i64(7));
  return n;
}

// The processes (alias `alias`) seen in the window of `q`, on its node if it names one.
std::string alive_in_window(QuerySql& s, const HistoryQuery& q, std::string_view alias);

// The query's filters on a table with node, pid and start_ns columns (alias `t`), each
// " AND ...": its node (when `node`), pid and comm.
std::string row_filters(QuerySql& s, const HistoryQuery& q, bool node);

// A page of anomalies, oldest first: read_columns of anomalies, then the window's count.
QuerySql anomalies_page_sql(Dialect d, const HistoryQuery& q);
// A page of leaks, largest first: read_columns of leaks, the process's comm, the
// window's count.
QuerySql leaks_page_sql(Dialect d, const HistoryQuery& q);
// The kernels of the window, most launches first (at most 1000): name, launches.
QuerySql kernels_sql(Dialect d, const WindowPlan& plan);

// Records that `node` writes the totals tables from the interval at `t_ns` on (from
// the start when it never wrote before); kept when set.
QuerySql mark_totals_sql(Dialect d, const std::string& node, std::int64_t t_ns);

}  // namespace eacgm::history
