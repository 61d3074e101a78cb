// Replay benchmark: records as the kernel writes them, pushed through the decoder
// (and the JSONL formatter, and the call summary), on one core. Target: decode at
// >= 5,000,000 records/s.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "analysis/call_summary.h"
#include "analysis/gpu_activity.h"
#include "analysis/live_analysis.h"
#include "bpf/events.h"
#include "core/clock.h"
#include "export/event_format.h"
#include "ingest/call_batcher.h"
#include "ingest/enricher_stages.h"
#include "ingest/kernel_names.h"
#include "ingest/nccl_comms.h"
#include "ingest/record_decoder.h"
#include "probe/catalog.h"

namespace {

using namespace eacgm;

// A probe table with the CUDA runtime catalog and 64k records cycling over it.
struct Replay {
  probe::ProbeTable table;
  std::vector<eacgm_record> records;

  Replay() {
    const auto& specs = probe::cuda_runtime_catalog().specs;
    for (const auto& s : specs) {
      ProbeInfo info;
      info.function = s.name;
      info.spec = s;
      table.add(std::move(info));
    }
    std::uint64_t t = monotonic_ns();
    records.resize(65536);
    for (std::size_t i = 0; i < records.size(); ++i) {
      eacgm_record& r = records[i];
      std::memset(&r, 0, sizeof(r));
      r.type = EACGM_REC_CALL;
      r.flags = EACGM_REC_HAS_EXIT;
      r.ts_ns = t + i * 1000;
      r.dur_ns = 800 + (i * 7919) % 5000;
      r.pid = 1000 + static_cast<std::uint32_t>(i % 4);
      r.tid = r.pid;
      r.probe_id = static_cast<std::uint32_t>(i % specs.size());
      r.ret = (i % 17 == 0) ? 2 : 0;
      r.nargs = static_cast<std::uint8_t>(specs[r.probe_id].args.size());
      for (int a = 0; a < 8; ++a) r.args[a] = 0x7f0000000000ull + i * 64 + static_cast<std::uint64_t>(a);
      std::strcpy(r.comm, "python3");
    }
  }
};

void BM_Decode(benchmark::State& state) {
  Replay replay;
  ingest::RecordDecoder decoder(replay.table);
  CallEvent e;
  std::size_t i = 0;
  for (auto _ : state) {
    const eacgm_record& r = replay.records[i++ & 65535];
    benchmark::DoNotOptimize(decoder.decode(&r, sizeof(r), e));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Decode);

void BM_DecodeAndSummarize(benchmark::State& state) {
  Replay replay;
  ingest::RecordDecoder decoder(replay.table);
  analysis::CallSummary summary;
  CallEvent e;
  std::size_t i = 0;
  for (auto _ : state) {
    const eacgm_record& r = replay.records[i++ & 65535];
    if (decoder.decode(&r, sizeof(r), e) == ingest::RecordKind::kCall) summary.add(e);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeAndSummarize);

void BM_DecodeAndFormatJsonl(benchmark::State& state) {
  Replay replay;
  ingest::RecordDecoder decoder(replay.table);
  CallEvent e;
  fmt::memory_buffer out;
  std::size_t i = 0;
  for (auto _ : state) {
    const eacgm_record& r = replay.records[i++ & 65535];
    if (decoder.decode(&r, sizeof(r), e) == ingest::RecordKind::kCall) exporting::append_jsonl(out, e);
    if (out.size() > (1u << 20)) out.clear();
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_DecodeAndFormatJsonl);

// The reader's path before the agent: enrichers called one by one, then `run`'s two
// aggregators per event.
void BM_ReaderPathDirect(benchmark::State& state) {
  Replay replay;
  ingest::RecordDecoder decoder(replay.table);
  ingest::NcclCommTable comms;
  ingest::KernelNames names;
  analysis::CallSummary summary;
  analysis::GpuActivity activity;
  CallEvent e;
  std::size_t i = 0;
  for (auto _ : state) {
    const eacgm_record& r = replay.records[i++ & 65535];
    if (decoder.decode(&r, sizeof(r), e) == ingest::RecordKind::kCall) {
      comms.enrich(e);
      names.enrich(e);
      summary.add(e);
      activity.add(e);
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ReaderPathDirect);

// The same through the reader's own per-record code (ingest/call_batcher.h): decode into
// the batch's slot, the enricher chain, batches of 256 to LiveAnalysis as the consumer.
void BM_ReaderPathChainBatched(benchmark::State& state) {
  Replay replay;
  ingest::EnricherChain chain;
  chain.add(ingest::make_nccl_comm_stage());
  chain.add(ingest::make_kernel_name_stage());
  ingest::CallBatcher batcher(replay.table, std::move(chain), std::make_shared<analysis::LiveAnalysis>());
  std::size_t i = 0;
  for (auto _ : state) {
    const eacgm_record& r = replay.records[i++ & 65535];
    benchmark::DoNotOptimize(batcher.add(&r, sizeof(r)));
  }
  batcher.flush();
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ReaderPathChainBatched);

}  // namespace

BENCHMARK_MAIN();
