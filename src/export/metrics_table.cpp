#include "export/metrics_table.h"

#include <fmt/format.h>

#include <array>

#include "core/agent_counters.h"

namespace eacgm::exporting {
namespace {

using enum MetricType;
using enum LabelSet;
constexpr auto kDcgm = MetricGroup::kDcgm;
constexpr auto kGpuGroup = MetricGroup::kGpu;
constexpr auto kProcessGroup = MetricGroup::kProcess;
constexpr auto kHttp = MetricGroup::kHttp;
constexpr auto kStore = MetricGroup::kStore;
constexpr auto kCalls = MetricGroup::kCalls;
constexpr auto kNccl = MetricGroup::kNccl;
constexpr auto kWaitGroup = MetricGroup::kWaits;
constexpr auto kInflightGroup = MetricGroup::kInflight;
constexpr auto kPythonGroup = MetricGroup::kPython;
constexpr auto kAgent = MetricGroup::kAgent;

// DCGM help texts are dcgm-exporter's own (etc/default-counters.csv), so dashboards and
// alerts written for it read the same series.
constexpr std::array kTable = {
    // dcgm-exporter compatible, NVML fields
    MetricDef{"DCGM_FI_DEV_GPU_UTIL", kGauge, "", "%", "GPU utilization (in %).", kGpu, kDcgm,
              "`nvmlDeviceGetUtilizationRates` (gpu)"},
    MetricDef{"DCGM_FI_DEV_MEM_COPY_UTIL", kGauge, "", "%", "Memory utilization (in %).", kGpu, kDcgm,
              "`nvmlDeviceGetUtilizationRates` (memory)"},
    MetricDef{"DCGM_FI_DEV_ENC_UTIL", kGauge, "", "%", "Encoder utilization (in %).", kGpu, kDcgm,
              "`nvmlDeviceGetEncoderUtilization`"},
    MetricDef{"DCGM_FI_DEV_DEC_UTIL", kGauge, "", "%", "Decoder utilization (in %).", kGpu, kDcgm,
              "`nvmlDeviceGetDecoderUtilization`"},
    MetricDef{"DCGM_FI_DEV_FB_FREE", kGauge, "", "MiB", "Framebuffer memory free (in MiB).", kGpu, kDcgm,
              "`nvmlDeviceGetMemoryInfo_v2` free, bytes / 2^20 rounded down"},
    MetricDef{"DCGM_FI_DEV_FB_USED", kGauge, "", "MiB", "Framebuffer memory used (in MiB).", kGpu, kDcgm,
              "`nvmlDeviceGetMemoryInfo_v2` used, bytes / 2^20 rounded down"},
    MetricDef{"DCGM_FI_DEV_FB_RESERVED", kGauge, "", "MiB", "Framebuffer memory reserved (in MiB).", kGpu,
              kDcgm, "`nvmlDeviceGetMemoryInfo_v2` reserved, bytes / 2^20 rounded down"},
    MetricDef{"DCGM_FI_DEV_GPU_TEMP", kGauge, "", "°C", "GPU temperature (in C).", kGpu, kDcgm,
              "`nvmlDeviceGetTemperature`"},
    MetricDef{"DCGM_FI_DEV_MEMORY_TEMP", kGauge, "", "°C", "Memory temperature (in C).", kGpu, kDcgm,
              "field `NVML_FI_DEV_MEMORY_TEMP`"},
    MetricDef{"DCGM_FI_DEV_POWER_USAGE", kGauge, "", "W", "Power draw (in W).", kGpu, kDcgm,
              "`nvmlDeviceGetPowerUsage` / 1000"},
    MetricDef{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", kCounter, "", "mJ",
              "Total energy consumption since boot (in mJ).", kGpu, kDcgm,
              "`nvmlDeviceGetTotalEnergyConsumption` (since the driver loaded; read every 10 s)"},
    MetricDef{"DCGM_FI_DEV_SM_CLOCK", kGauge, "", "MHz", "SM clock frequency (in MHz).", kGpu, kDcgm,
              "`nvmlDeviceGetClockInfo(SM)`"},
    MetricDef{"DCGM_FI_DEV_MEM_CLOCK", kGauge, "", "MHz", "Memory clock frequency (in MHz).", kGpu, kDcgm,
              "`nvmlDeviceGetClockInfo(MEM)`"},
    MetricDef{"DCGM_FI_DEV_PCIE_REPLAY_COUNTER", kCounter, "", "count", "Total number of PCIe retries.", kGpu,
              kDcgm, "`nvmlDeviceGetPcieReplayCounter` (read every 10 s)"},
    MetricDef{"DCGM_FI_DEV_XID_ERRORS", kGauge, "", "XID code", "Value of the last XID error encountered.",
              kGpu, kDcgm, "NVML XID events since eacgm started; 0 before the first"},
    MetricDef{"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", kCounter, "", "count",
              "Total number of single-bit volatile ECC errors.", kGpu, kDcgm,
              "`nvmlDeviceGetTotalEccErrors(CORRECTED, VOLATILE)`"},
    MetricDef{"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", kCounter, "", "count",
              "Total number of double-bit volatile ECC errors.", kGpu, kDcgm,
              "`nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE)`"},
    MetricDef{"DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", kCounter, "", "count",
              "Number of remapped rows for correctable errors", kGpu, kDcgm, "`nvmlDeviceGetRemappedRows`"},
    MetricDef{"DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", kCounter, "", "count",
              "Number of remapped rows for uncorrectable errors", kGpu, kDcgm, "`nvmlDeviceGetRemappedRows`"},
    MetricDef{"DCGM_FI_DEV_ROW_REMAP_FAILURE", kGauge, "", "0/1", "Whether remapping of rows has failed",
              kGpu, kDcgm, "`nvmlDeviceGetRemappedRows` (failure)"},

    // dcgm-exporter's profiling fields (DCGM_FI_PROF_*), from NVML GPM on Hopper and newer
    // without DCGM's host engine; absent on GPUs without GPM.
    MetricDef{"DCGM_FI_PROF_GR_ENGINE_ACTIVE", kGauge, "", "ratio",
              "Ratio of time the graphics engine is active.", kGpu, kDcgm,
              "GPM `NVML_GPM_METRIC_GRAPHICS_UTIL` / 100 over a sampling interval, read every 10th pass (a "
              "read costs 1.7 ms of CPU) and held between"},
    MetricDef{"DCGM_FI_PROF_SM_ACTIVE", kGauge, "", "ratio",
              "The ratio of cycles an SM has at least 1 warp assigned.", kGpu, kDcgm,
              "GPM `NVML_GPM_METRIC_SM_UTIL` / 100"},
    MetricDef{"DCGM_FI_PROF_SM_OCCUPANCY", kGauge, "", "ratio",
              "The ratio of number of warps resident on an SM.", kGpu, kDcgm,
              "GPM `NVML_GPM_METRIC_SM_OCCUPANCY` / 100"},
    MetricDef{"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", kGauge, "", "ratio",
              "Ratio of cycles any tensor pipe is active.", kGpu, kDcgm,
              "GPM `NVML_GPM_METRIC_ANY_TENSOR_UTIL` / 100"},
    MetricDef{"DCGM_FI_PROF_PIPE_TENSOR_HMMA_ACTIVE", kGauge, "", "ratio",
              "Ratio of cycles the half-precision tensor (HMMA) pipe is active.", kGpu, kDcgm,
              "GPM `NVML_GPM_METRIC_HMMA_TENSOR_UTIL` / 100"},
    MetricDef{"DCGM_FI_PROF_PIPE_TENSOR_IMMA_ACTIVE", kGauge, "", "ratio",
              "Ratio of cycles the integer tensor (IMMA) pipe is active.", kGpu, kDcgm,
              "GPM `NVML_GPM_METRIC_IMMA_TENSOR_UTIL` / 100"},
    MetricDef{"DCGM_FI_PROF_PIPE_TENSOR_DFMA_ACTIVE", kGauge, "", "ratio",
              "Ratio of cycles the double-precision tensor (DFMA) pipe is active.", kGpu, kDcgm,
              "GPM `NVML_GPM_METRIC_DFMA_TENSOR_UTIL` / 100"},
    MetricDef{"DCGM_FI_PROF_PIPE_FP64_ACTIVE", kGauge, "", "ratio",
              "Ratio of cycles the fp64 pipes are active.", kGpu, kDcgm,
              "GPM `NVML_GPM_METRIC_FP64_UTIL` / 100"},
    MetricDef{"DCGM_FI_PROF_PIPE_FP32_ACTIVE", kGauge, "", "ratio",
              "Ratio of cycles the fp32 pipes are active.", kGpu, kDcgm,
              "GPM `NVML_GPM_METRIC_FP32_UTIL` / 100"},
    MetricDef{"DCGM_FI_PROF_PIPE_FP16_ACTIVE", kGauge, "", "ratio",
              "Ratio of cycles the fp16 pipes are active.", kGpu, kDcgm,
              "GPM `NVML_GPM_METRIC_FP16_UTIL` / 100"},
    MetricDef{"DCGM_FI_PROF_DRAM_ACTIVE", kGauge, "", "ratio",
              "Ratio of cycles the device memory interface is active sending or receiving data.", kGpu, kDcgm,
              "GPM `NVML_GPM_METRIC_DRAM_BW_UTIL` / 100 (bandwidth used over the peak)"},
    MetricDef{"DCGM_FI_PROF_PCIE_TX_BYTES", kGauge, "", "bytes/s",
              "The rate of data transmitted over the PCIe bus - including both protocol headers and data "
              "payloads - in bytes per second.",
              kGpu, kDcgm, "GPM `NVML_GPM_METRIC_PCIE_TX_PER_SEC` (MiB/s) x 2^20"},
    MetricDef{"DCGM_FI_PROF_PCIE_RX_BYTES", kGauge, "", "bytes/s",
              "The rate of data received over the PCIe bus - including both protocol headers and data "
              "payloads - in bytes per second.",
              kGpu, kDcgm, "GPM `NVML_GPM_METRIC_PCIE_RX_PER_SEC` (MiB/s) x 2^20"},
    MetricDef{
        "DCGM_FI_PROF_NVLINK_TX_BYTES", kGauge, "", "bytes/s",
        "The rate of data transmitted over NVLink, not including protocol headers, in bytes per second.",
        kGpu, kDcgm, "GPM `NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC` (MiB/s) x 2^20"},
    MetricDef{"DCGM_FI_PROF_NVLINK_RX_BYTES", kGauge, "", "bytes/s",
              "The rate of data received over NVLink, not including protocol headers, in bytes per second.",
              kGpu, kDcgm, "GPM `NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC` (MiB/s) x 2^20"},

    // eacgm's own GPU families: what dcgm-exporter's defaults do not carry
    MetricDef{"eacgm_gpu_lost", kGauge, "", "0/1", "Whether the GPU fell off the bus or needs a reset (1).",
              kGpu, kGpuGroup, "`NVML_ERROR_GPU_IS_LOST` / `RESET_REQUIRED` from any query"},
    MetricDef{"eacgm_gpu_memory_total_bytes", kGauge, "bytes", "bytes", "Framebuffer memory size.", kGpu,
              kGpuGroup, "`nvmlDeviceGetMemoryInfo_v2` total"},
    MetricDef{"eacgm_gpu_power_limit_watts", kGauge, "watts", "W", "Enforced power limit.", kGpu, kGpuGroup,
              "`nvmlDeviceGetEnforcedPowerLimit` / 1000"},
    MetricDef{"eacgm_gpu_fan_speed_ratio", kGauge, "ratio", "0..1", "Fan speed as a fraction of its maximum.",
              kGpu, kGpuGroup, "`nvmlDeviceGetFanSpeed` / 100"},
    MetricDef{"eacgm_gpu_pcie_tx_bytes_per_second", kGauge, "", "bytes/s",
              "PCIe bytes transmitted per second over the last sampling interval.", kGpu, kGpuGroup,
              "`NVML_FI_DEV_PCIE_COUNT_TX_BYTES` over the interval"},
    MetricDef{"eacgm_gpu_pcie_rx_bytes_per_second", kGauge, "", "bytes/s",
              "PCIe bytes received per second over the last sampling interval.", kGpu, kGpuGroup,
              "`NVML_FI_DEV_PCIE_COUNT_RX_BYTES` over the interval"},
    MetricDef{"eacgm_gpu_nvlink_tx_bytes_total", kCounter, "bytes", "bytes",
              "NVLink data bytes transmitted, all links.", kGpu, kGpuGroup,
              "field `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX`"},
    MetricDef{"eacgm_gpu_nvlink_rx_bytes_total", kCounter, "bytes", "bytes",
              "NVLink data bytes received, all links.", kGpu, kGpuGroup,
              "field `NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX`"},
    MetricDef{"eacgm_gpu_nvlink_link_tx_bytes_per_second", kGauge, "", "bytes/s",
              "NVLink data bytes transmitted per second on one link over the last sampling interval.",
              kGpuLink, kGpuGroup, "GPM `NVML_GPM_METRIC_NVLINK_L<link>_TX_PER_SEC` (MiB/s) x 2^20"},
    MetricDef{"eacgm_gpu_nvlink_link_rx_bytes_per_second", kGauge, "", "bytes/s",
              "NVLink data bytes received per second on one link over the last sampling interval.", kGpuLink,
              kGpuGroup, "GPM `NVML_GPM_METRIC_NVLINK_L<link>_RX_PER_SEC` (MiB/s) x 2^20"},
    MetricDef{"eacgm_gpu_xid_errors_total", kCounter, "", "count",
              "XID critical errors seen since eacgm started.", kGpu, kGpuGroup,
              "NVML events (`nvmlEventTypeXidCriticalError`)"},
    MetricDef{
        "eacgm_gpu_health_events_total", kCounter, "", "count",
        "GPU health events since eacgm started, by kind: an XID error (xid), volatile ECC errors "
        "(ecc_corrected, ecc_uncorrected), remapped rows (remapped_rows, remap_pending, remap_failure), "
        "a clock slowdown that began (sw_power_cap, hw_slowdown, sw_thermal_slowdown, "
        "hw_thermal_slowdown, hw_power_brake_slowdown), PCIe replays (pcie_replay) or the GPU lost "
        "(gpu_lost). A counter that rose by N adds N; /api/v1/gpu_events lists each event with the "
        "processes on the GPU.",
        kGpuKind, kGpuGroup,
        "NVML XID events, `nvmlDeviceGetTotalEccErrors`, `nvmlDeviceGetRemappedRows`, "
        "`nvmlDeviceGetCurrentClocksEventReasons`, `nvmlDeviceGetPcieReplayCounter`, compared pass to pass"},

    MetricDef{"eacgm_pod_gpu_share_ratio", kGauge, "ratio", "0..1",
              "A pod's share of the GPU's time (the GPU's utilisation divided among the pods with processes "
              "on it; a GPU's shares sum to its utilisation). `basis` says from what: NVML's per-process "
              "samples (nvml), traced kernel launches (launches) or evenly (even); processes in no pod "
              "together without pod labels.",
              kPodShare, kGpuGroup, "NVML utilisation, divided (docs/kubernetes.md, \"Shared GPUs\")"},
    MetricDef{
        "eacgm_pod_sm_active_ratio", kGauge, "ratio", "0..1",
        "A pod's share of the GPU's SM activity (GPM; a GPU's shares sum to its DCGM_FI_PROF_SM_ACTIVE), "
        "divided on the same `basis` as eacgm_pod_gpu_share_ratio; absent on GPUs without GPM.",
        kPodShare, kGpuGroup, "GPM SM activity, divided (docs/kubernetes.md, \"Shared GPUs\")"},

    // Per process and GPU
    MetricDef{"eacgm_process_gpu_memory_bytes", kGauge, "bytes", "bytes",
              "GPU memory used by the process on this GPU.", kProcess, kProcessGroup,
              "`nvmlDeviceGetComputeRunningProcesses_v3` / `GraphicsRunningProcesses_v3`"},
    MetricDef{"eacgm_process_sm_utilization_ratio", kGauge, "ratio", "0..1",
              "Fraction of time the process had a kernel running on the GPU's SMs over the last interval.",
              kProcess, kProcessGroup, "`nvmlDeviceGetProcessUtilization` (sm) / 100"},
    MetricDef{"eacgm_process_memory_utilization_ratio", kGauge, "ratio", "0..1",
              "Fraction of time the process was reading or writing GPU memory over the last interval.",
              kProcess, kProcessGroup, "`nvmlDeviceGetProcessUtilization` (mem) / 100"},

    // Traced calls
    MetricDef{"eacgm_calls_total", kCounter, "", "count",
              "Traced calls per function (calls made inside an outer traced call, such as the driver "
              "launch under cudaLaunchKernel, are counted in eacgm_nested_calls_total instead).",
              kFunction, kCalls, "probes (call summary)"},
    MetricDef{"eacgm_call_errors_total", kCounter, "", "count",
              "Traced calls that failed (non-zero result code, or a null pointer returned). Only timed "
              "calls' returns are seen (always-on mode times a sample): the error ratio is this over "
              "eacgm_call_duration_seconds_count, not over eacgm_calls_total.",
              kFunction, kCalls, "probes (call summary)"},
    MetricDef{"eacgm_nested_calls_total", kCounter, "", "count",
              "Traced calls made inside an outer traced call on the same thread.", kFunction, kCalls,
              "probes (call summary)"},
    MetricDef{"eacgm_calls_estimated_total", kCounter, "", "count",
              "Of eacgm_calls_total, the calls scaled from part of the time: while a process is over "
              "trace.budget on its entry traps alone, the counted probes that are not pinned are attached "
              "for only part of each second and their counts are scaled (estimates; the API gives each "
              "function's error).",
              kFunction, kCalls, "budget controller (always-on duty cycle)"},
    MetricDef{"eacgm_call_duration_seconds", kHistogram, "seconds", "s",
              "Host-side duration of traced calls (API time, not GPU kernel time); buckets folded from "
              "the 1% relative-error sketch.",
              kFunction, kCalls, "probes (entry to return)"},
    MetricDef{"eacgm_bytes_total", kCounter, "bytes", "bytes",
              "Bytes the traced copies, memsets and NCCL calls asked to move (their `bytes` argument; "
              "failed calls included, nested calls left out); only functions that have one.",
              kFunction, kCalls, "probes (call summary)"},
    MetricDef{"eacgm_kernel_launches_total", kCounter, "", "count",
              "Kernel launches per kernel name (runtime or driver API, a runtime launch's driver launch "
              "counted once); kernels beyond [serve] max_function_series in kernel=\"other\".",
              kKernel, kCalls, "probes (launch kernel names)"},
    MetricDef{"eacgm_gpu_time_launches_total", kCounter, "", "count",
              "Kernel and graph launches the hook counted exactly, per kernel name (graphs as "
              "kernel=\"graph\"), in processes whose hook times their kernels (docs/gpu-time.md); "
              "names beyond [serve] max_function_series in kernel=\"other\".",
              kKernel, kCalls, "the hook's GPU time"},
    MetricDef{"eacgm_gpu_time_kernel_duration_seconds", kHistogram, "seconds", "seconds",
              "GPU durations of the launches the hook timed (1 in N per kernel, every NCCL kernel), "
              "from the GPU's events, each kernel's first launch left out (it runs cold); _count is "
              "the timed launches behind them; spans that started on an idle stream only when a "
              "kernel has no other (they hold the launch's latency).",
              kKernel, kCalls, "the hook's GPU time"},
    MetricDef{"eacgm_gpu_time_kernel_estimated_seconds", kGauge, "seconds", "seconds",
              "GPU time of all launches of the kernel: the first launch's plus the timed mean times "
              "the other launches (an estimate, so it may go down as well as up).",
              kKernel, kCalls, "the hook's GPU time"},
    MetricDef{"eacgm_gpu_time_kernel_estimated_ci95_seconds", kGauge, "seconds", "seconds",
              "Half-width of the 95% confidence interval of eacgm_gpu_time_kernel_estimated_seconds: "
              "1.96 standard errors of the timed mean (finite-population corrected) times the "
              "launches it stands for; kernels with fewer than two timed launches left out.",
              kKernel, kCalls, "the hook's GPU time"},
    MetricDef{"eacgm_process_calls_total", kCounter, "", "count",
              "Traced calls per process (nested calls left out).", kTraced, kCalls, "probes"},
    MetricDef{"eacgm_process_call_errors_total", kCounter, "", "count",
              "Failed traced calls per process, of the timed ones (always-on mode times a sample; "
              "eacgm_call_errors_total).",
              kTraced, kCalls, "probes"},
    MetricDef{"eacgm_process_gpu_allocated_bytes", kGauge, "bytes", "bytes",
              "CUDA memory a running traced process holds through the allocation calls traced (device, "
              "async, managed, pitched, VMM and page-locked host allocations, minus their frees); "
              "cuda_device is the allocating thread's last cudaSetDevice, else 0 (the runtime's default).",
              kLedger, kCalls, "probes (memory ledger)"},
    MetricDef{"eacgm_process_gpu_allocated_peak_bytes", kGauge, "bytes", "bytes",
              "The most CUDA memory a running traced process held at once through the traced calls.", kLedger,
              kCalls, "probes (memory ledger)"},
    MetricDef{"eacgm_memory_leaks_total", kCounter, "", "count",
              "Allocations that traced processes had not freed when they exited (their leaks), every "
              "exited process since the agent started; which process leaked what: /api/v1/memory.",
              kNone, kCalls, "probes (memory ledger, at each process's exit)"},
    MetricDef{"eacgm_memory_leaked_bytes_total", kCounter, "bytes", "bytes",
              "Bytes of those leaks (eacgm_memory_leaks_total).", kNone, kCalls,
              "probes (memory ledger, at each process's exit)"},
    MetricDef{"eacgm_anomalies_total", kCounter, "", "count",
              "Unusually slow traced calls (kind=\"call\"), slow intervals of a function's calls "
              "(kind=\"interval\") and hangs (kind=\"hang\") flagged since the agent started; the last "
              "ones: /api/v1/anomalies.",
              kFolded, kCalls, "anomaly detector"},
    MetricDef{"eacgm_probe_hit_cost_seconds", kGauge, "seconds", "s",
              "What one probe hit costs the traced thread on this machine, measured at start "
              "(`eacgm probes --calibrate`): kind=\"entry\" (a counted call), \"entry_return\" (a timed "
              "one), \"stepped_entry\" (an entry the kernel single-steps), \"per_call\" (per-call mode).",
              kFolded, kCalls, "calibration (always-on mode)"},
    MetricDef{"eacgm_probe_duty_cycle_ratio", kGauge, "ratio", "0..1",
              "Share of each second the counted probes that are not pinned are attached (1: always, their "
              "counts exact; below 1 while a process is over trace.budget on its entry traps alone).",
              kNone, kCalls, "budget controller (always-on duty cycle)"},
    MetricDef{"eacgm_process_probe_overhead_ratio", kGauge, "ratio", "0..1",
              "Estimated slowdown the probes cause a running traced process over the last few seconds: "
              "its traps times their calibrated cost, over its own CPU time (trace.budget is the "
              "allowed value).",
              kTraced, kCalls, "budget controller (always-on mode)"},
    MetricDef{"eacgm_process_table_overflow_calls_total", kCounter, "", "count",
              "Traced calls of processes a per-process table had no room for: in eacgm_calls_total, "
              "not in that table's figures. table=\"activity\": eacgm_process_calls_total and "
              "/api/v1/processes (4,096 processes); \"memory\": the memory ledger (its memory calls, 4,096 "
              "processes); "
              "\"history\": the history store's per-process rows (1,024 processes at once, one that "
              "exited kept 20 s at least, so a burst of more than about 50 new processes a second "
              "for long overflows it).",
              kTableName, kCalls, "analyses (per-process tables)"},
    MetricDef{"eacgm_series_folded_total", kCounter, "", "count",
              "Series beyond [serve] max_function_series / max_process_series, folded into the "
              "`other` series (function=\"other\", pid=\"other\"; memory series beyond "
              "max_process_series are left out and counted as kind=\"memory\", NCCL series beyond "
              "max_function_series as kind=\"nccl\", processes whose host waits were folded into "
              "pid=\"other\" as kind=\"waits\").",
              kFolded, kCalls, "exporter"},

    // NCCL: bandwidth per communicator and call, arrival skew of this node's ranks
    MetricDef{"eacgm_nccl_algorithm_bandwidth_bytes_per_second", kGauge, "", "bytes/s",
              "nccl-tests' algorithm bandwidth of the traced calls: their size S summed over their "
              "host-side durations summed (launch to return on the host, not the transfer time; "
              "docs/report.md). Absent when no call's size is known.",
              kNcclCall, kNccl, "probes (NCCL bytes, durations)"},
    MetricDef{"eacgm_nccl_bus_bandwidth_bytes_per_second", kGauge, "", "bytes/s",
              "nccl-tests' bus bandwidth: the algorithm bandwidth times the collective's factor "
              "(AllReduce 2(n-1)/n; ReduceScatter, AllGather, AlltoAll, Gather, Scatter (n-1)/n; "
              "others 1). Absent when the communicator's size is not known.",
              kNcclCall, kNccl, "probes (NCCL bytes, durations, communicator size)"},
    MetricDef{"eacgm_nccl_gpu_algorithm_bandwidth_bytes_per_second", kGauge, "", "bytes/s",
              "nccl-tests' algorithm bandwidth over GPU time: the calls' size S summed over the "
              "GPU durations of their kernels, which the hook timed (docs/gpu-time.md). Absent "
              "for processes without the hook's GPU time.",
              kNcclCall, kNccl, "the hook's GPU time (NCCL kernels joined to their calls)"},
    MetricDef{"eacgm_nccl_gpu_bus_bandwidth_bytes_per_second", kGauge, "", "bytes/s",
              "nccl-tests' bus bandwidth over GPU time: the GPU algorithm bandwidth times the "
              "collective's factor. Absent when the communicator's size is not known.",
              kNcclCall, kNccl, "the hook's GPU time, communicator size"},
    MetricDef{"eacgm_nccl_gpu_seconds_total", kCounter, "", "seconds",
              "GPU time of the NCCL kernels the hook timed and joined to these calls (every NCCL "
              "kernel is timed).",
              kNcclCall, kNccl, "the hook's GPU time"},
    MetricDef{"eacgm_nccl_collective_instances_total", kCounter, "", "count",
              "Collective instances at which every rank of the communicator on this node arrived "
              "(matched by per-rank call order).",
              kNcclComm, kNccl, "probes (NCCL arrival matching)"},
    MetricDef{"eacgm_nccl_incomplete_instances_total", kCounter, "", "count",
              "Collective instances given up with ranks missing (a rank's process exited, or its "
              "records were lost).",
              kNcclComm, kNccl, "probes (NCCL arrival matching)"},
    MetricDef{"eacgm_nccl_skew_seconds", kHistogram, "seconds", "s",
              "Per collective instance, the latest minus the earliest host-side start among the "
              "communicator's ranks on this node; buckets folded from the 1% relative-error sketch.",
              kNcclComm, kNccl, "probes (NCCL arrival matching)"},
    MetricDef{"eacgm_nccl_last_arrivals_total", kCounter, "", "count",
              "Matched collective instances at which this rank arrived last.", kNcclRank, kNccl,
              "probes (NCCL arrival matching)"},
    MetricDef{"eacgm_nccl_lateness_seconds_total", kCounter, "seconds", "s",
              "Sum over matched instances of this rank's start minus the earliest start; divided by "
              "eacgm_nccl_collective_instances_total, its mean lateness.",
              kNcclRank, kNccl, "probes (NCCL arrival matching)"},
    MetricDef{"eacgm_nccl_straggler", kGauge, "", "0/1",
              "1 for the rank that arrived last at more than half of at least 20 instances and by "
              "at least 1 ms on average; 0 for the communicator's other ranks.",
              kNcclRank, kNccl, "probes (NCCL arrival matching)"},
    MetricDef{"eacgm_nccl_rank_collective_entered", kGauge, "", "number",
              "The number of the last collective the rank entered on the communicator, the one it is "
              "inside now included: its collectives counted in call order from the communicator's "
              "creation (1-based; 0: none yet), which NCCL makes the same numbering on every node. "
              "A rank below the communicator's highest number has not entered the collectives above "
              "it. No series once the rank's process exits.",
              kNcclSteps, kNccl, "probes (NCCL calls per communicator), the calls in flight"},
    MetricDef{"eacgm_nccl_rank_collective_finished", kGauge, "", "number",
              "The number of the last collective of the rank whose call returned (NCCL enqueues the "
              "work: the GPU may still run it); one below eacgm_nccl_rank_collective_entered while the "
              "rank is inside a collective call.",
              kNcclSteps, kNccl, "probes (NCCL calls per communicator)"},
    MetricDef{"eacgm_nccl_rank_waiting_seconds", kGauge, "seconds", "s",
              "How long the rank's process has been in its oldest waiting call in flight (the "
              "collective itself, or the synchronisation that waits for it), at the last scan of the "
              "calls in flight; 0 when none is in flight.",
              kNcclSteps, kNccl, "the kernel's table of calls in flight, read each second"},
    MetricDef{"eacgm_nccl_communicator_ranks", kGauge, "", "count",
              "The communicator's size (its ranks on every node), for the communicators with a "
              "eacgm_nccl_rank_collective_entered series whose size is known: the ranks no agent "
              "reports are the size minus the ranks reported.",
              kNcclComm, kNccl, "probes (NCCL communicator creation)"},

    // Host waits: time traced processes spend blocked on the host
    MetricDef{"eacgm_host_waits_total", kCounter, "", "count",
              "Waits per traced process and kind: calls of the synchronizing functions (kind "
              "stream_sync, event_sync, device_sync), of synchronous copies (blocking_copy) and of NCCL "
              "communicator set-up (nccl), and futex (futex) and poll-family (input_wait) syscalls that "
              "blocked.",
              kWaits, kWaitGroup, "probes (calls), host-wait tracer (syscalls)"},
    MetricDef{"eacgm_host_wait_seconds_total", kCounter, "seconds", "s",
              "Time the process's threads spent in those waits, summed over threads. Always-on mode "
              "times every synchronization and synchronous copy (futex and input_wait are always "
              "timed too); a kind with only some calls timed is priced at its sampled calls' mean.",
              kWaits, kWaitGroup, "probes (calls), host-wait tracer (syscalls)"},
    MetricDef{"eacgm_host_wait_duration_seconds", kHistogram, "seconds", "s",
              "Durations of the timed waits of every traced process, per kind; buckets folded from the "
              "1% relative-error sketch (always-on: the sampled synchronizing calls).",
              kWaitKind, kWaitGroup, "probes (calls), host-wait tracer (syscalls)"},

    // Calls in flight: threads inside a waiting call for at least [hangs] min_age_s
    MetricDef{"eacgm_call_in_flight_max_seconds", kGauge, "seconds", "s",
              "Age of the oldest call of the function in flight now, of the waiting calls "
              "(synchronisations, blocking copies, NCCL calls, user probes with waits = true) in flight "
              "for at least [hangs] min_age_s; no series while none is.",
              kFunction, kInflightGroup, "the kernel's table of calls in flight, read each second"},
    MetricDef{"eacgm_process_stuck_seconds", kGauge, "seconds", "s",
              "Age of the process's oldest waiting call in flight now, of those in flight for at least "
              "[hangs] min_age_s: how long one of its threads has been waiting in one call; no series "
              "while none is.",
              kTraced, kInflightGroup, "the kernel's table of calls in flight, read each second"},
    MetricDef{"eacgm_hangs", kGauge, "", "count",
              "Hangs found at the last scan of the calls in flight, by the rule that says so: "
              "rule=\"communicator\" (ranks of an NCCL communicator never entered the collective the "
              "others wait in), rule=\"age\" (a call in flight longer than [hangs] hang_after_s); "
              "which ones: /api/v1/inflight. Both series always exist.",
              kHangRule, kInflightGroup, "the calls in flight and the NCCL collectives' counts per rank"},

    // The Python stack sampler's profile (per-function shares are in /api/v1/python, not
    // here: function labels would make a new series whenever the ranking changes)
    MetricDef{"eacgm_python_profile_window_seconds", kGauge, "seconds", "s",
              "How far back the Python profile reaches: [python] window_s (it keeps between four "
              "fifths of it and all of it).",
              kNone, kPythonGroup, "configuration"},
    MetricDef{"eacgm_python_profile_samples", kGauge, "", "count",
              "Python stack samples in the profile's window, every sampled process.", kNone, kPythonGroup,
              "Python stack sampler"},
    MetricDef{"eacgm_python_profile_processes", kGauge, "", "count",
              "Processes with Python stack samples in the profile's window.", kNone, kPythonGroup,
              "Python stack sampler"},
    MetricDef{"eacgm_python_profile_samples_over_cap_total", kCounter, "", "count",
              "Python stack samples the profile could not keep whole, per cap reached: processes (the "
              "sample is not counted at all), rows (a thread, function or line row is missing), stacks "
              "(counted under \"[stacks past the cap]\" in the folded stacks).",
              kPythonCap, kPythonGroup, "Python stack sampler ([python] max_rows, max_stacks)"},

    // The agent itself
    MetricDef{"eacgm_agent_cpu_seconds_total", kCounter, "seconds", "s",
              "CPU time the agent used (user and system, all its threads).", kNone, kAgent,
              "`/proc/self/stat`"},
    MetricDef{"eacgm_agent_resident_memory_bytes", kGauge, "bytes", "bytes", "The agent's resident memory.",
              kNone, kAgent, "`/proc/self/statm`"},
    MetricDef{"eacgm_agent_start_time_seconds", kGauge, "seconds", "s",
              "When the agent started, seconds since the Unix epoch.", kNone, kAgent, "clock"},
    MetricDef{"eacgm_build_info", kGauge, "", "",
              "Always 1: the agent's version, the commit it was built from, the kernel it runs on and "
              "its trace mode (always-on or per-call), as labels.",
              kBuild, kAgent, "build, `uname`, configuration"},
    MetricDef{"eacgm_gpu_sampling_active", kGauge, "", "",
              "1 while the GPUs are sampled through NVML; 0 when sampling is off (`--no-gpu`, [gpu] "
              "sample = false) or NVML could not be loaded (the log says why): the DCGM_FI_* and "
              "eacgm_gpu_* families are then absent.",
              kNone, kAgent, "NVML sampling"},

    // The history store (present while `serve` keeps one)
    MetricDef{"eacgm_store_up", kGauge, "", "",
              "1 while the last write to the history store succeeded; 0 while it fails (the batches wait in "
              "the spool).",
              kNone, kStore, "history writer"},
    MetricDef{"eacgm_store_batches_written_total", kCounter, "", "count",
              "Intervals written to the history store (one transaction each).", kNone, kStore,
              "history writer"},
    MetricDef{"eacgm_store_rows_written_total", kCounter, "", "count", "Rows written to the history store.",
              kNone, kStore, "history writer"},
    MetricDef{"eacgm_store_write_failures_total", kCounter, "", "count",
              "Writes the history store refused or could not take (a full disk, a read-only file, a "
              "PostgreSQL server away); each batch is retried with back-off.",
              kNone, kStore, "history writer"},
    MetricDef{"eacgm_store_spooled_batches", kGauge, "", "count",
              "Intervals waiting to be written while the store is away ([store] spool_batches at most).",
              kNone, kStore, "history writer"},
    MetricDef{"eacgm_store_dropped_batches_total", kCounter, "", "count",
              "Intervals let go because the spool was full: their rows are not in the history.", kNone,
              kStore, "history writer"},
    MetricDef{"eacgm_store_dropped_rows_total", kCounter, "", "count", "The rows of the dropped intervals.",
              kNone, kStore, "history writer"},
    MetricDef{
        "eacgm_store_size_bytes", kGauge, "bytes", "bytes",
        "The store's size at the last maintenance (SQLite: the pages in use; PostgreSQL: the tables and "
        "their indexes on the server).",
        kNone, kStore, "history writer"},
    MetricDef{"eacgm_store_last_write_timestamp_seconds", kGauge, "seconds", "s",
              "When the last interval was written, seconds since the Unix epoch.", kNone, kStore,
              "history writer"},
    MetricDef{"eacgm_store_clock_offset_seconds", kGauge, "seconds", "s",
              "The PostgreSQL server's clock minus this node's (CLOCK_REALTIME), measured at each write "
              "NTP-style (the best of the last 8 round trips). Add it to a node's timestamps to put them "
              "on the server's clock before comparing them with another node's. With a fleet store "
              "([store] fleet_url), the fleet server's, measured at each shipment. Absent until measured "
              "and for a SQLite store alone.",
              kNone, kStore, "history writer"},
    MetricDef{"eacgm_store_clock_uncertainty_seconds", kGauge, "seconds", "s",
              "The bound on eacgm_store_clock_offset_seconds's error: half the round trip it was measured "
              "over, plus half the server clock's microsecond. A cross-node difference smaller than the two "
              "nodes' uncertainties added is not meaningful.",
              kNone, kStore, "history writer"},
    MetricDef{"eacgm_fleet_link_up", kGauge, "", "",
              "1 while the fleet link's last round with the fleet's store ([store] fleet_url, else [store] "
              "url) succeeded: the agent's heartbeat in `agents` and its NCCL rank standings; 0 while it "
              "fails (said once, retried with back-off up to 30 s; the writer and the shipper go on).",
              kNone, kStore, "fleet link"},
    MetricDef{"eacgm_fleet_link_failures_total", kCounter, "", "count",
              "Rounds of the fleet link that failed (the fleet's store away or refusing).", kNone, kStore,
              "fleet link"},
    MetricDef{"eacgm_fleet_link_standings_writes_total", kCounter, "", "count",
              "Writes of the node's NCCL rank standings to the fleet's store (each second while a rank "
              "waits or they changed, else each interval).",
              kNone, kStore, "fleet link"},
    MetricDef{"eacgm_fleet_link_standings_reads_total", kCounter, "", "count",
              "Reads of the job's NCCL rank standings of every node (each second while a rank waits here "
              "or in the rows last read, else each interval; none while the node has no NCCL rank).",
              kNone, kStore, "fleet link"},
    MetricDef{"eacgm_fleet_link_last_heartbeat_timestamp_seconds", kGauge, "seconds", "s",
              "When the agent's row of `agents` was last written, seconds since the Unix epoch.", kNone,
              kStore, "fleet link"},
    MetricDef{"eacgm_fleet_store_up", kGauge, "", "",
              "1 while the last round of shipping to the fleet store ([store] fleet_url) shipped all the "
              "node's store had rolled up; 0 while it fails (the rows wait in the node's store).",
              kNone, kStore, "fleet shipper"},
    MetricDef{"eacgm_fleet_store_shipments_total", kCounter, "", "count",
              "Transactions committed to the fleet store: minute, hour and job rollups, processes, "
              "anomalies and leaks of this node.",
              kNone, kStore, "fleet shipper"},
    MetricDef{"eacgm_fleet_store_rows_shipped_total", kCounter, "", "count",
              "Rows shipped to the fleet store (never the raw intervals, which stay on the node).", kNone,
              kStore, "fleet shipper"},
    MetricDef{"eacgm_fleet_store_sent_bytes_total", kCounter, "bytes", "bytes",
              "Bytes of statements, parameters and COPY data sent to the fleet store (the protocol's "
              "framing aside).",
              kNone, kStore, "fleet shipper"},
    MetricDef{"eacgm_fleet_store_failures_total", kCounter, "", "count",
              "Rounds of shipping that failed (the fleet store away or refusing); each is retried with "
              "back-off from where it stopped.",
              kNone, kStore, "fleet shipper"},
    MetricDef{"eacgm_fleet_store_behind_seconds", kGauge, "seconds", "s",
              "How much of the node's minute rollups the fleet store does not have yet (0 once it caught "
              "up).",
              kNone, kStore, "fleet shipper"},
    MetricDef{"eacgm_fleet_store_last_shipment_timestamp_seconds", kGauge, "seconds", "s",
              "When the last shipment was committed, seconds since the Unix epoch.", kNone, kStore,
              "fleet shipper"},

    // The HTTP server itself
    MetricDef{"eacgm_http_requests_total", kCounter, "", "count", "HTTP responses sent, every status.", kNone,
              kHttp, "server"},
    MetricDef{"eacgm_http_bad_requests_total", kCounter, "", "count",
              "HTTP responses with a 4xx status (every kind below, and malformed requests).", kNone, kHttp,
              "server"},
    MetricDef{"eacgm_http_unauthorized_total", kCounter, "", "count",
              "Requests refused for a missing or wrong bearer token (401).", kNone, kHttp, "server"},
    MetricDef{"eacgm_http_not_found_total", kCounter, "", "count", "Requests for an unknown path (404).",
              kNone, kHttp, "server"},
    MetricDef{"eacgm_http_method_not_allowed_total", kCounter, "", "count",
              "Requests with a method other than GET or HEAD (405).", kNone, kHttp, "server"},
    MetricDef{"eacgm_http_payload_too_large_total", kCounter, "", "count",
              "Requests whose body, URI or headers exceeded the limits (413, 414, 431).", kNone, kHttp,
              "server"},
    MetricDef{"eacgm_http_overloaded_total", kCounter, "", "count",
              "Connections answered 503 because every worker was busy.", kNone, kHttp, "server"},
    MetricDef{"eacgm_http_handler_errors_total", kCounter, "", "count", "Handlers that threw (500).", kNone,
              kHttp, "server"},
    MetricDef{"eacgm_http_active_connections", kGauge, "", "count",
              "Requests being served by worker threads now (a stream holds one for its life).", kNone, kHttp,
              "server"},
    MetricDef{"eacgm_http_open_connections", kGauge, "", "count",
              "Connections open now: being read by the event loop, idle between requests, or served.", kNone,
              kHttp, "server"},
    MetricDef{"eacgm_http_header_timeouts_total", kCounter, "", "count",
              "Connections closed because the request line and headers had not arrived within the header "
              "timeout (from the accept, or a kept-alive connection's first byte).",
              kNone, kHttp, "server"},
    MetricDef{"eacgm_http_body_timeouts_total", kCounter, "", "count",
              "Connections closed because a POST body had not arrived within the body timeout after its "
              "headers.",
              kNone, kHttp, "server"},
    MetricDef{"eacgm_http_idle_timeouts_total", kCounter, "", "count",
              "Kept-alive connections closed after the keep-alive timeout without a next request.", kNone,
              kHttp, "server"},
    MetricDef{"eacgm_http_connections_shed_total", kCounter, "", "count",
              "Connections closed at the open-connection cap: the oldest idle one to make room, or the new "
              "one when none was idle.",
              kNone, kHttp, "server"},
    MetricDef{"eacgm_sse_clients", kGauge, "", "count", "Clients connected to event streams.", kNone, kHttp,
              "server (SSE)"},
    MetricDef{"eacgm_sse_events_published_total", kCounter, "", "count", "Events published to event streams.",
              kNone, kHttp, "server (SSE)"},
    MetricDef{"eacgm_sse_events_dropped_total", kCounter, "", "count",
              "Events a slow client lost because its queue was full.", kNone, kHttp, "server (SSE)"},
};

std::string_view labels_doc(LabelSet set) {
  switch (set) {
    case kNone:
      return "";
    case kBuild:
      return "`version`, `commit`, `kernel`, `mode`";
    case kGpu:
      return "GPU labels";
    case kProcess:
      return "process labels";
    case kFunction:
      return "`domain`, `function`";
    case kTraced:
      return "`pid`, `comm` (or pod labels), rank and workload labels";
    case kPodShare:
      return "`gpu`, `uuid`, `pod`, `namespace`, `basis`";
    case kGpuLink:
      return "GPU labels, `link`";
    case kGpuKind:
      return "GPU labels, `kind`";
    case kFolded:
      return "`kind`";
    case kLedger:
      return "`pid`, `comm` (or pod labels), `cuda_device`, rank and workload labels";
    case kKernel:
      return "`kernel`";
    case kNcclCall:
      return "`comm_id`, `function`";
    case kNcclComm:
      return "`comm_id`";
    case kNcclRank:
      return "`comm_id`, `nccl_rank`, `pid`";
    case kNcclSteps:
      return "`comm_id`, `nccl_rank`, `nranks` (when known), `pid`";
    case kWaits:
      return "`pid`, `comm`, `kind`, rank labels";
    case kWaitKind:
      return "`kind`";
    case kPythonCap:
      return "`cap`";
    case kTableName:
      return "`table`";
    case kHangRule:
      return "`rule`";
  }
  return "";
}

std::string_view group_title(MetricGroup g) {
  switch (g) {
    case MetricGroup::kDcgm:
      return "GPU metrics, dcgm-exporter compatible";
    case MetricGroup::kGpu:
      return "GPU metrics beyond dcgm-exporter's defaults";
    case MetricGroup::kProcess:
      return "Per-process GPU metrics";
    case MetricGroup::kCalls:
      return "Traced calls";
    case MetricGroup::kNccl:
      return "NCCL";
    case MetricGroup::kWaits:
      return "Host waits";
    case MetricGroup::kInflight:
      return "Calls in flight";
    case MetricGroup::kPython:
      return "Python hot spots";
    case MetricGroup::kAgent:
      return "The agent itself";
    case MetricGroup::kStore:
      return "The history store";
    case MetricGroup::kHttp:
      return "The HTTP server";
  }
  return "";
}

}  // namespace

std::span<const MetricDef> metric_table() { return kTable; }

const MetricDef* find_metric(std::string_view name) {
  for (const auto& d : kTable) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

void append_counters(ExpositionWriter& out, const CounterValues& values) {
  for (const auto& v : values.values) {
    if (!v.def || v.def->metric.empty()) continue;
    const MetricType type = v.def->kind == CounterKind::kCounter ? MetricType::kCounter : MetricType::kGauge;
    out.begin_family(FamilyDesc{v.def->metric, type, v.def->help, v.def->unit});
    out.add({}, v.value);
  }
}

FamilyDesc family_of(const MetricDef& def) { return FamilyDesc{def.name, def.type, def.help, def.unit}; }

void begin_family(ExpositionWriter& out, std::string_view name) {
  const MetricDef* def = find_metric(name);
  out.begin_family(def != nullptr ? family_of(*def) : FamilyDesc{name, MetricType::kUnknown, "", ""});
}

std::string render_metrics_doc() {
  std::string out =
      "# Metrics\n"
      "\n"
      "<!-- Generated from src/export/metrics_table.cpp by `build/eacgm-metrics-doc > docs/metrics.md`;\n"
      "     do not edit by hand (the unit test MetricsDoc.UpToDate fails when this file is stale). -->\n"
      "\n"
      "Every family `eacgm serve` exposes on `/metrics` ([api.md](api.md)), in Prometheus text\n"
      "format 0.0.4 or, when the scraper asks for it in `Accept`, OpenMetrics 1.0.0. A field the\n"
      "GPU does not report (or a lost GPU) has no sample: the series is absent, not zero.\n"
      "\n"
      "GPU labels of the `DCGM_FI_*` families, as dcgm-exporter writes them (its dashboards\n"
      "and alerts expect them): `gpu` (index), `UUID`, `pci_bus_id`, `device` (`nvidia<index>`),\n"
      "`modelName`, `Hostname` (when known), `DCGM_FI_DRIVER_VERSION` (when known), and\n"
      "`container`, `pod`, `namespace` when the GPU is attributed to a Kubernetes workload.\n"
      "On a GPU in MIG mode the `DCGM_FI_PROF_*` families have no series for the whole GPU\n"
      "but one per GPU instance (NVML GPM's `nvmlGpmMigSampleGet`), with `GPU_I_PROFILE`\n"
      "(e.g. `1g.10gb`) and `GPU_I_ID` (NVML's GPU instance id) after `modelName`, as\n"
      "dcgm-exporter writes them.\n"
      "(dcgm-exporter releases name the host label `Hostname`; its development branch has\n"
      "renamed it `hostname`.) eacgm's own GPU families (`eacgm_gpu_*`) carry the same labels\n"
      "in Prometheus's snake_case: `gpu`, `uuid`, `pci_bus_id`, `device`, `model_name`,\n"
      "`hostname`, `driver_version` (and the Kubernetes ones); join them with `on(gpu)`.\n"
      "\n"
      "Process labels: `pid`, `comm`, `gpu`, `uuid`, `container_id` (64-hex id, when in a\n"
      "container), and `rank`, `local_rank`, `world_size` when the process's environment\n"
      "names them (`RANK`/`LOCAL_RANK`/`WORLD_SIZE`, else Slurm's `SLURM_PROCID`/`SLURM_LOCALID`/\n"
      "`SLURM_NTASKS`, else Open MPI's `OMPI_COMM_WORLD_*`).\n"
      "\n"
      "Workload labels, on every per-process family when known: `pod`, `namespace`, `container`\n"
      "(the container's name), `pod_uid` (dcgm-exporter's names; from the process's cgroup path and\n"
      "the node's kubelet) and `job` (`SLURM_JOB_ID`, else `TORCHELASTIC_RUN_ID`). A process in a\n"
      "named pod carries them *instead of* `pid` and `comm` (and `container_id`), and the processes\n"
      "of one container (and rank) are one series, summed (the overhead ratio: the largest), so a\n"
      "pod's series do not multiply with its processes; `[kubernetes] process_series = \"pid\"`\n"
      "keeps `pid` and `comm` too (docs/kubernetes.md, \"Attribution\").\n"
      "\n"
      "dcgm-exporter's six counters without a `_total` suffix keep their names\n"
      "(`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION`, `DCGM_FI_DEV_PCIE_REPLAY_COUNTER`,\n"
      "`DCGM_FI_DEV_ECC_SBE_VOL_TOTAL`, `DCGM_FI_DEV_ECC_DBE_VOL_TOTAL`,\n"
      "`DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS`, `DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS`): in\n"
      "OpenMetrics they are typed `unknown` so that the series names stay identical in both\n"
      "formats. `promtool check metrics` reports those six and the camelCase labels of the\n"
      "`DCGM_FI_*` families, dcgm-exporter's names; every `eacgm_*` family lints clean.\n";
  bool first = true;
  MetricGroup group{};
  for (const auto& d : kTable) {
    if (first || d.group != group) {
      fmt::format_to(
          std::back_inserter(out),
          "\n## {}\n\n| name | type | unit | labels | help | source |\n|---|---|---|---|---|---|\n",
          group_title(d.group));
      group = d.group;
      first = false;
    }
    fmt::format_to(std::back_inserter(out), "| `{}` | {} | {} | {} | {} | {} |\n", d.name,
                   metric_type_name(d.type), d.doc_unit, labels_doc(d.labels), d.help, d.source);
  }
  out +=
      "\n## The agent's counters\n\n"
      "The same counters as the accounting line of `eacgm trace`/`run` ([cli.md](cli.md)), under these\n"
      "names (no labels). A trace restarted by a configuration reload starts them again from zero.\n\n"
      "| name | type | accounting key | help |\n|---|---|---|---|\n";
  for (const auto& c : agent_counter_table()) {
    fmt::format_to(std::back_inserter(out), "| `{}` | {} | `{}` | {} |\n", c.metric,
                   c.kind == CounterKind::kCounter ? "counter" : "gauge", c.key, c.help);
  }
  return out;
}

}  // namespace eacgm::exporting
