// The fleet simulation's node (fleet_node.h).
#include "fleet_node.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>

#include "../busy_node.h"
#include "core/agent_counters.h"
#include "core/counter_registry.h"
#include "probe/catalog.h"

namespace eacgm::fleet {
namespace {

constexpr const char* kCudaFunctions[] = {
    "cudaLaunchKernel",      "cudaMalloc",          "cudaFree",
    "cudaMemcpyAsync",       "cudaMemcpy",          "cudaMemsetAsync",
    "cudaStreamSynchronize", "cudaEventRecord",     "cudaEventQuery",
    "cudaEventSynchronize",  "cudaStreamWaitEvent", "cudaDeviceSynchronize",
    "cudaSetDevice",         "cudaMallocAsync",     "cudaFreeAsync",
    "cudaGraphLaunch",       "cudaHostAlloc",       "cudaStreamCreateWithFlags"};
constexpr const char* kNcclFunctions[] = {"ncclAllReduce", "ncclAllGather",  "ncclReduceScatter",
                                          "ncclBroadcast", "ncclGroupStart", "ncclGroupEnd"};
constexpr const char* kWorkerFunctions[] = {"cudaHostAlloc", "cudaMemcpyAsync", "cudaStreamSynchronize",
                                            "cudaSetDevice"};

std::shared_ptr<const ProbeInfo> probe_of(const std::string& name) {
  static std::uint32_t next_id = 1;
  for (const auto& catalog : probe::builtin_catalogs()) {
    for (const auto& spec : catalog.specs) {
      if (spec.name != name) continue;
      auto p = std::make_shared<ProbeInfo>();
      p->id = next_id++;
      p->function = spec.name;
      p->symbol = spec.symbol;
      p->library = "/usr/lib/x86_64-linux-gnu/" + spec.library;
      p->spec = spec;
      return p;
    }
  }
  throw std::runtime_error("fleet: no built-in probe named " + name);
}

std::string pod_name(unsigned pod) {
  if (pod >= kTrainingPods) return "serve-llm-" + std::to_string(pod - kTrainingPods);
  return "train-" + std::to_string(pod / kPodsPerJob) + "-worker-" + std::to_string(pod % kPodsPerJob);
}

std::string pod_uid(unsigned pod) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "5f0e1d2c-3b4a-4958-8776-%012u", pod);
  return buf;
}

std::string container_id(unsigned pod) {
  char buf[65];
  std::snprintf(buf, sizeof(buf), "%064x", 0xc0ffee00u + pod);
  return buf;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> out;
  for (unsigned k = 0; k < kKernels; ++k) {
    out.push_back(
        "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl<at::native::BinaryFunctor<"
        "float, float, float, at::native::binary_internal::MulFunctor<float> > > >(int, T3)::{lambda(int)#" +
        std::to_string(k) + "}>");
  }
  return out;
}

DeviceSample device(unsigned i, std::uint64_t pass) {
  DeviceSample d;
  d.index = i;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-6f3c2a1e-" + std::to_string(1000 + i) + "-4b7d-9e2f-0123456789ab";
  d.pci_bus_id = "00000000:" + std::to_string(18 + i) + ":00.0";
  d.utilization_gpu_percent = static_cast<std::uint32_t>((37ULL * i + pass) % 101);
  d.utilization_memory_percent = static_cast<std::uint32_t>((11ULL * i + pass) % 101);
  d.memory_total_bytes = 85520809984ull;
  d.memory_used_bytes = 60000000000ull + i * 1000000ull + pass * 4096;
  d.memory_free_bytes = *d.memory_total_bytes - *d.memory_used_bytes;
  d.memory_reserved_bytes = 536870912ull;
  d.temperature_gpu_celsius = 60 + i + static_cast<unsigned>(pass % 5);
  d.temperature_memory_celsius = 70 + i;
  d.power_usage_milliwatts = static_cast<std::uint32_t>(550000 + 1000 * i + pass % 97);
  d.power_limit_milliwatts = 700000;
  d.energy_total_millijoules = 123456789000ull + pass * 550000ull;
  d.clock_sm_mhz = 1980;
  d.clock_memory_mhz = 2619;
  d.fan_speed_percent = 30;
  d.encoder_utilization_percent = 0;
  d.decoder_utilization_percent = 1;
  d.pcie_tx_bytes_per_second = 123456789ull + pass;
  d.pcie_rx_bytes_per_second = 987654321ull + pass;
  d.pcie_replay_total = 2;
  d.nvlink_tx_bytes_total = 1234567890123ull + pass * 1000000;
  d.nvlink_rx_bytes_total = 2234567890123ull + pass * 1000000;
  d.ecc_corrected_volatile_total = 3;
  d.ecc_uncorrected_volatile_total = 0;
  d.remapped_rows_correctable = 1;
  d.remapped_rows_uncorrectable = 0;
  d.remapped_rows_pending = false;
  d.remapped_rows_failure = false;
  d.clock_event_reasons = 1;
  d.xid_errors_total = 0;
  return d;
}

CounterValues agent_counters(std::uint64_t events) {
  static CounterRegistry registry;
  static std::uint64_t current = 0;
  static bool filled = false;
  if (!filled) {
    for (const auto& c : agent_counter_table()) {
      const bool is_events = std::string(c.key) == "events";
      registry.add(agent_counter(c.key), [is_events] { return is_events ? current : std::uint64_t{7}; });
    }
    filled = true;
  }
  current = events;
  return registry.read();
}

}  // namespace

std::string job_of(unsigned pod, unsigned node) {
  if (pod >= kTrainingPods) return "";
  return "train-" + std::to_string(node / 4 * (kTrainingPods / kPodsPerJob) + pod / kPodsPerJob);
}

sample::RankInfo FleetFacts::rank(std::uint32_t pid) const {
  sample::RankInfo r;
  if (!is_traced(pid) || pod_of(pid) >= kTrainingPods) return r;
  const unsigned pod = pod_of(pid);
  r.rank = pod % kPodsPerJob;
  r.local_rank = pod % kPodsPerJob;
  r.world_size = kPodsPerJob;
  return r;
}

std::string FleetFacts::cmdline(std::uint32_t pid) const {
  if (!is_traced(pid)) return "";
  if (pod_of(pid) >= kTrainingPods) return "python3 -m vllm.entrypoints.openai.api_server --model llama";
  return "python3 train.py --config big.yaml";
}

std::optional<std::string> FleetFacts::container(std::uint32_t pid) const {
  if (!is_traced(pid)) return std::nullopt;
  return container_id(pod_of(pid));
}

sample::Workload FleetFacts::workload(std::uint32_t pid) const {
  sample::Workload w;
  if (!is_traced(pid)) return w;
  const unsigned pod = pod_of(pid);
  w.container_id = container_id(pod);
  w.pod_uid = pod_uid(pod);
  w.pod = pod_name(pod);
  w.namespace_ = "ml";
  w.container = "pytorch";
  w.job = job_of(pod);
  w.gpus = {"GPU-6f3c2a1e-" + std::to_string(1000 + pod % kGpus) + "-4b7d-9e2f-0123456789ab"};
  return w;
}

FleetProbes FleetProbes::make() {
  FleetProbes p;
  for (const char* f : kCudaFunctions) p.cuda.push_back(probe_of(f));
  for (const char* f : kNcclFunctions) p.nccl.push_back(probe_of(f));
  for (const char* f : kWorkerFunctions) p.worker.push_back(probe_of(f));
  p.launch = p.cuda.front();
  return p;
}

GpuSnapshot gpu_pass(std::uint64_t pass, std::chrono::system_clock::time_point wall) {
  GpuSnapshot s;
  s.sequence = pass;
  s.time = wall;
  s.pass_cpu_time = std::chrono::microseconds(900);
  s.system.driver_version = "580.159.04";
  s.system.cuda_driver_version = 13000;
  for (unsigned i = 0; i < kGpus; ++i) s.devices.push_back(device(i, pass));
  for (unsigned pod = 0; pod < kPods; ++pod) {
    ProcessSample ps;
    ps.pid = main_pid(pod);
    ps.gpu_index = pod % kGpus;
    ps.gpu_uuid = s.devices[ps.gpu_index].uuid;
    ps.name = "python3";
    ps.container_id = container_id(pod);
    ps.compute = true;
    ps.used_memory_bytes = 9000000000ull + pod * 4096ull + pass;
    ps.sm_utilization_percent = static_cast<std::uint32_t>((pod + pass) % 101);
    ps.memory_utilization_percent = pod % 50;
    ps.encoder_utilization_percent = 0;
    ps.decoder_utilization_percent = 0;
    s.processes.push_back(std::move(ps));
  }
  return s;
}

SyntheticNode::SyntheticNode() : probes_(FleetProbes::make()), kernels_(kernel_names()) {
  live_.set_process_alive([](std::uint32_t pid) { return is_traced(pid); });
  live_.set_thread_alive([](std::uint32_t pid, std::uint32_t) { return is_traced(pid); });
}

void SyntheticNode::advance(std::chrono::system_clock::time_point wall) {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::mt19937_64 rng(seconds_);
  std::uniform_real_distribution<double> decades(3.5, 7.0);  // 3 us .. 10 ms
  const auto t0 = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(wall.time_since_epoch()).count());
  std::vector<CallEvent> batch;
  auto add = [&](const std::shared_ptr<const ProbeInfo>& p, std::uint32_t pid, std::uint64_t k) {
    CallEvent e;
    e.ts_ns = t0 + k * 1000;
    e.pid = pid;
    e.tid = pid;
    std::snprintf(e.comm.data(), e.comm.size(), "%s", is_main(pid) ? "python3" : "pt_data_worker");
    e.probe = p;
    e.has_exit = p->spec.with_exit;
    e.dur_ns = e.has_exit ? static_cast<std::uint64_t>(std::pow(10.0, decades(rng))) : 0;
    e.ret = rng() % 200 == 0 ? 2 : 0;
    batch.push_back(std::move(e));
    return &batch.back();
  };
  for (unsigned pod = 0; pod < kPods; ++pod) {
    const std::uint32_t pid = main_pid(pod);
    std::uint64_t k = 0;
    for (const auto& p : probes_.cuda) {
      const int calls = p == probes_.launch ? 0 : 3;
      for (int c = 0; c < calls; ++c) add(p, pid, k++);
    }
    if (pod < kTrainingPods) {
      for (const auto& p : probes_.nccl) add(p, pid, k++);
    }
    // Kernel launches: each pod launches 1/8 of the node's kernel names each second.
    for (unsigned kn = pod % 8; kn < kKernels; kn += 8) add(probes_.launch, pid, k++)->kernel = kernels_[kn];
    for (const auto& p : probes_.worker) add(p, worker_pid(pod), k++);
  }
  events_ += batch.size();
  live_.on_calls(batch);
  live_.on_gpu(gpu_pass(seconds_, wall));
  live_.on_tick(std::chrono::steady_clock::now(), agent_counters(events_));
  ++seconds_;
}

IntervalShapes::IntervalShapes() : probes_(FleetProbes::make()), kernels_(kernel_names()) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 64; ++i) {
    analysis::LatencySketch sk;
    std::lognormal_distribution<double> d(std::log(2000.0 * (1 + i % 16)), 0.4);
    for (int c = 0; c < 50 + i * 10; ++c) sk.add(static_cast<std::uint64_t>(d(rng)));
    sketches_.push_back(history::stored(sk));
  }
}

history::IntervalBatch IntervalShapes::interval(unsigned node, std::int64_t t_ns, std::int64_t i) const {
  constexpr std::int64_t kS = 1'000'000'000;
  history::IntervalBatch b;
  b.t_ns = t_ns;
  b.span_ns = 10 * kS;
  b.mode = "always-on";
  const FleetFacts facts;
  std::size_t s = static_cast<std::size_t>(i);
  auto function = [&](const history::ProcessKey& key, const ProbeInfo& p) {
    history::FunctionRecord fr;
    fr.process = key;
    fr.domain = p.spec.domain;
    fr.function = p.function;
    fr.latency = sketches_[s++ % sketches_.size()];
    fr.calls = fr.timed = fr.latency.count;
    fr.bytes = p.function.find("Memcpy") != std::string::npos ? fr.calls * 65536 : 0;
    b.functions.push_back(std::move(fr));
  };
  for (unsigned pod = 0; pod < kPods; ++pod) {
    for (const std::uint32_t pid : {main_pid(pod), worker_pid(pod)}) {
      const history::ProcessKey key{pid, 1'700'000'000 * kS + pid};
      history::ProcessRecord r;
      r.key = key;
      r.comm = is_main(pid) ? "python3" : "pt_data_worker";
      r.cmdline = facts.cmdline(pid);
      const auto rank = facts.rank(pid);
      r.rank = rank.rank;
      r.local_rank = rank.local_rank;
      r.world_size = rank.world_size;
      const auto w = facts.workload(pid);
      r.container = w.container_id;
      r.pod_uid = w.pod_uid;
      r.pod = w.pod;
      r.namespace_ = w.namespace_;
      r.container_name = w.container;
      r.job = job_of(pod, node);
      r.first_ns = t_ns;
      r.last_ns = t_ns + b.span_ns;
      b.processes.push_back(r);
      if (is_main(pid)) {
        for (const auto& p : probes_.cuda) function(key, *p);
        if (pod < kTrainingPods) {
          for (const auto& p : probes_.nccl) function(key, *p);
        }
        b.gpu_processes.push_back({pod % kGpus, key, 10, 9ULL << 30, 80, 0, 4000.0, 4000.0});
      } else {
        for (const auto& p : probes_.worker) function(key, *p);
      }
    }
  }
  for (const auto& k : kernels_) b.kernels.push_back({k, 1000});
  static_assert(kGpus == 8, "busy_node.h's GPUs");
  history::bench::add_busy_gpus(b, [](std::uint32_t g) {
    return "GPU-6f3c2a1e-" + std::to_string(1000 + g) + "-4b7d-9e2f-0123456789ab";
  });
  return b;
}

std::size_t rows_of(const history::IntervalBatch& b) {
  return b.processes.size() + b.functions.size() + b.kernels.size() + b.gpus.size() + b.gpu_processes.size();
}

}  // namespace eacgm::fleet
