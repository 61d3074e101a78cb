// The registry: the built-in analyses of the live hub, in the order each input reaches
// them. An analysis is a file in analysis/live/ that defines its factory; registering it
// is its declaration here and its entry in kBuiltin.
#include <memory>

#include "analysis/live_analysis.h"

namespace eacgm::analysis {

std::unique_ptr<Analysis> make_calls(const Environment& env);
std::unique_ptr<Analysis> make_process_calls(const Environment& env);
std::unique_ptr<Analysis> make_gpu_activity(const Environment& env);
std::unique_ptr<Analysis> make_last_gpu_pass(const Environment& env);
std::unique_ptr<Analysis> make_memory(const Environment& env);
std::unique_ptr<Analysis> make_kernels(const Environment& env);
std::unique_ptr<Analysis> make_gpu_work(const Environment& env);
std::unique_ptr<Analysis> make_nccl(const Environment& env);
std::unique_ptr<Analysis> make_collectives(const Environment& env);
std::unique_ptr<Analysis> make_nccl_recorder(const Environment& env);
std::unique_ptr<Analysis> make_job_verdict(const Environment& env);
std::unique_ptr<Analysis> make_job_stragglers(const Environment& env);
std::unique_ptr<Analysis> make_op_kernels(const Environment& env);
std::unique_ptr<Analysis> make_series(const Environment& env);
std::unique_ptr<Analysis> make_anomalies(const Environment& env);
std::unique_ptr<Analysis> make_overhead(const Environment& env);
std::unique_ptr<Analysis> make_python(const Environment& env);
std::unique_ptr<Analysis> make_host_waits(const Environment& env);
std::unique_ptr<Analysis> make_gpu_times(const Environment& env);
std::unique_ptr<Analysis> make_gpu_health(const Environment& env);

namespace {

constexpr AnalysisFactory kBuiltin[] = {
    make_calls,           // calls per function: counts, errors, bytes, latency
    make_process_calls,   // each process's calls by function (the history)
    make_gpu_activity,    // GPU activity per device and process
    make_last_gpu_pass,   // the latest NVML pass
    make_memory,          // the memory ledger and leaks
    make_kernels,         // launches per kernel name and shape
    make_gpu_work,        // kernels, memsets, copies per process and stream
    make_nccl,            // NCCL calls, bandwidth, kernels on the GPU
    make_collectives,     // ranks' skew, calls in flight, hangs
    make_nccl_recorder,   // the flight recorder: the last collectives per rank
    make_job_verdict,     // the hang verdict across nodes (after collectives: reads its standings)
    make_job_stragglers,  // the rank arriving last across nodes
    make_op_kernels,      // kernels per PyTorch op
    make_series,          // per-second rollups
    make_anomalies,       // slow calls and intervals
    make_overhead,        // the probes' cost per process
    make_python,          // Python hot spots
    make_host_waits,      // time blocked on the host
    make_gpu_times,       // what the hooks timed on the GPU
    make_gpu_health,      // XID, ECC, slowdowns with the work on the GPU
};

}  // namespace

std::span<const AnalysisFactory> builtin_analyses() { return kBuiltin; }

}  // namespace eacgm::analysis
