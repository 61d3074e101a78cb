// NCCL families for /metrics, named and described by metrics_table.
#include "export/nccl_metrics.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/nccl_progress.h"
#include "analysis/nccl_skew.h"
#include "analysis/nccl_stats.h"
#include "export/call_metrics.h"
#include "export/metrics_table.h"

namespace eacgm::exporting {
namespace {

std::string comm_label(std::uint64_t comm_id) { return fmt::format("0x{:016x}", comm_id); }

Labels rank_labels(const analysis::NcclCommSkew& c, const analysis::NcclRankArrivals& r) {
  return {{"comm_id", comm_label(c.comm_id)},
          {"nccl_rank", std::to_string(r.rank)},
          {"pid", std::to_string(r.pid)}};
}

// Where each rank stands in its communicator's numbering (analysis/nccl_progress.h): the
// series a rule compares across nodes.
void append_progress_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                             std::size_t max_series) {
  const auto& all = snap.get<analysis::NcclProgressSummary>().comms;
  const std::span<const analysis::NcclCommStanding> comms(all.data(), std::min(all.size(), max_series));
  auto labels = [](const analysis::NcclCommStanding& c, const analysis::NcclRankStanding& r) {
    Labels l{{"comm_id", comm_label(c.comm_id)}, {"nccl_rank", std::to_string(r.rank)}};
    if (c.nranks > 0) l.push_back({"nranks", std::to_string(c.nranks)});
    l.push_back({"pid", std::to_string(r.pid)});
    return l;
  };
  using Standing = analysis::NcclRankStanding;
  const std::pair<const char*, double (*)(const Standing&)> families[] = {
      {"eacgm_nccl_rank_collective_entered",
       [](const Standing& r) { return static_cast<double>(r.entered); }},
      {"eacgm_nccl_rank_collective_finished",
       [](const Standing& r) { return static_cast<double>(r.finished); }},
      {"eacgm_nccl_rank_waiting_seconds",
       [](const Standing& r) { return static_cast<double>(r.waiting_ns) / 1e9; }},
  };
  for (const auto& [name, value] : families) {
    begin_family(out, name);
    for (const auto& c : comms) {
      for (const auto& r : c.ranks) out.add(labels(c, r), value(r));
    }
  }
  begin_family(out, "eacgm_nccl_communicator_ranks");
  for (const auto& c : comms) {
    if (c.nranks > 0) out.add({{"comm_id", comm_label(c.comm_id)}}, static_cast<std::uint64_t>(c.nranks));
  }
}

}  // namespace

std::uint64_t nccl_series_left_out(const analysis::AnalysisSnapshot& snap, std::size_t max_series) {
  const std::size_t rows = snap.get<analysis::NcclStats>().key_count();
  const std::size_t comms = snap.get<analysis::NcclSkewSummary>().comms.size();
  const std::size_t progress = snap.get<analysis::NcclProgressSummary>().comms.size();
  return (rows > max_series ? rows - max_series : 0) + (comms > max_series ? comms - max_series : 0) +
         (progress > max_series ? progress - max_series : 0);
}

void append_nccl_metrics(ExpositionWriter& out, const analysis::AnalysisSnapshot& snap,
                         std::size_t max_series) {
  auto rows = snap.get<analysis::NcclStats>().rows();  // most bytes first: the busiest are kept
  if (rows.size() > max_series) rows.resize(max_series);
  auto call_labels = [](const analysis::NcclRow& r) {
    return Labels{{"comm_id", comm_label(r.comm_id)}, {"function", r.function}};
  };
  begin_family(out, "eacgm_nccl_algorithm_bandwidth_bytes_per_second");
  for (const auto& r : rows) {
    if (r.algbw) out.add(call_labels(r), *r.algbw);
  }
  begin_family(out, "eacgm_nccl_bus_bandwidth_bytes_per_second");
  for (const auto& r : rows) {
    if (r.busbw) out.add(call_labels(r), *r.busbw);
  }

  begin_family(out, "eacgm_nccl_gpu_algorithm_bandwidth_bytes_per_second");
  for (const auto& r : rows) {
    if (r.gpu && r.gpu->algbw) out.add(call_labels(r), *r.gpu->algbw);
  }
  begin_family(out, "eacgm_nccl_gpu_bus_bandwidth_bytes_per_second");
  for (const auto& r : rows) {
    if (r.gpu && r.gpu->busbw) out.add(call_labels(r), *r.gpu->busbw);
  }
  begin_family(out, "eacgm_nccl_gpu_seconds_total");
  for (const auto& r : rows) {
    if (r.gpu) out.add(call_labels(r), static_cast<double>(r.gpu->gpu_ns) / 1e9);
  }

  const auto& all = snap.get<analysis::NcclSkewSummary>().comms;
  const std::span<const analysis::NcclCommSkew> comms(all.data(), std::min(all.size(), max_series));
  begin_family(out, "eacgm_nccl_collective_instances_total");
  for (const auto& c : comms) out.add({{"comm_id", comm_label(c.comm_id)}}, c.instances);
  begin_family(out, "eacgm_nccl_incomplete_instances_total");
  for (const auto& c : comms) out.add({{"comm_id", comm_label(c.comm_id)}}, c.incomplete);
  begin_family(out, "eacgm_nccl_skew_seconds");
  for (const auto& c : comms) {
    if (c.skew.count() == 0) continue;
    auto buckets = fold_sketch(c.skew);
    out.add_histogram({{"comm_id", comm_label(c.comm_id)}}, buckets, static_cast<double>(c.skew.sum()) / 1e9,
                      c.skew.count());
  }
  begin_family(out, "eacgm_nccl_last_arrivals_total");
  for (const auto& c : comms) {
    for (const auto& r : c.ranks) out.add(rank_labels(c, r), r.last);
  }
  begin_family(out, "eacgm_nccl_lateness_seconds_total");
  for (const auto& c : comms) {
    for (const auto& r : c.ranks) out.add(rank_labels(c, r), static_cast<double>(r.lateness_sum_ns) / 1e9);
  }
  begin_family(out, "eacgm_nccl_straggler");
  for (const auto& c : comms) {
    for (const auto& r : c.ranks) out.add(rank_labels(c, r), std::uint64_t{r.straggler ? 1u : 0u});
  }
  append_progress_metrics(out, snap, max_series);
}

}  // namespace eacgm::exporting
