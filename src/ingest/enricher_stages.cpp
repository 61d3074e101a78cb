// Adapters that make the naming tables and the Python pairing enricher stages, with
// their counters published for readers on other threads.
#include "ingest/enricher_stages.h"

#include <atomic>

#include "core/agent_counters.h"
#include "ingest/graph_capture.h"
#include "ingest/kernel_names.h"
#include "ingest/nccl_comms.h"
#include "ingest/python_calls.h"

namespace eacgm::ingest {
namespace {

class NcclCommStage final : public Enricher {
 public:
  std::string_view name() const override { return "nccl_comms"; }
  bool enrich(CallEvent& event, CallOut&) override {
    table_.enrich(event);
    evictions_.store(table_.evictions(), std::memory_order_relaxed);
    return true;
  }
  void forget(std::uint32_t pid) override { table_.forget(pid); }
  std::vector<std::uint32_t> pids() const override { return table_.pids(); }
  void register_counters(CounterRegistry& registry) override {
    registry.add(agent_counter("nccl_comm_evictions"),
                 [this] { return evictions_.load(std::memory_order_relaxed); });
  }

 private:
  NcclCommTable table_;
  std::atomic<std::uint64_t> evictions_{0};
};

class KernelNameStage final : public Enricher {
 public:
  explicit KernelNameStage(std::shared_ptr<const ProcessMapsCache> remembered)
      : names_(KernelNames::Options{}, std::move(remembered)) {}
  std::string_view name() const override { return "kernel_names"; }
  bool enrich(CallEvent& event, CallOut&) override {
    names_.enrich(event);
    const auto& c = names_.counters();
    from_memory_.store(c.from_memory, std::memory_order_relaxed);
    unreadable_.store(c.unreadable, std::memory_order_relaxed);
    return true;
  }
  void forget(std::uint32_t pid) override { names_.forget(pid); }
  std::vector<std::uint32_t> pids() const override { return names_.pids(); }
  void register_counters(CounterRegistry& registry) override {
    registry.add(agent_counter("names_from_memory"),
                 [this] { return from_memory_.load(std::memory_order_relaxed); });
    registry.add(agent_counter("names_unreadable"),
                 [this] { return unreadable_.load(std::memory_order_relaxed); });
  }

 private:
  KernelNames names_;
  std::atomic<std::uint64_t> from_memory_{0}, unreadable_{0};
};

class GraphCaptureStage final : public Enricher {
 public:
  std::string_view name() const override { return "graph_capture"; }
  bool enrich(CallEvent& event, CallOut&) override {
    graphs_.enrich(event);
    const auto& c = graphs_.counters();
    launches_.store(c.graph_launches, std::memory_order_relaxed);
    unknown_.store(c.graph_launches_unknown, std::memory_order_relaxed);
    captured_.store(c.captured_calls, std::memory_order_relaxed);
    return true;
  }
  void forget(std::uint32_t pid) override { graphs_.forget(pid); }
  std::vector<std::uint32_t> pids() const override { return graphs_.pids(); }
  void register_counters(CounterRegistry& registry) override {
    registry.add(agent_counter("graph_launches"),
                 [this] { return launches_.load(std::memory_order_relaxed); });
    registry.add(agent_counter("graph_launches_unknown"),
                 [this] { return unknown_.load(std::memory_order_relaxed); });
    registry.add(agent_counter("captured_calls"),
                 [this] { return captured_.load(std::memory_order_relaxed); });
  }

 private:
  GraphCapture graphs_;
  std::atomic<std::uint64_t> launches_{0}, unknown_{0}, captured_{0};
};

class PythonPairingStage final : public Enricher {
 public:
  explicit PythonPairingStage(std::string filter) : pairing_(std::move(filter)) {}
  std::string_view name() const override { return "python_calls"; }
  bool enrich(CallEvent& event, CallOut& out) override {
    return !pairing_.consume(event, [&out](const CallEvent& call) { out.emit(call); });
  }
  void forget(std::uint32_t pid) override { pairing_.forget(pid); }
  std::vector<std::uint32_t> pids() const override { return pairing_.pids(); }
  void register_counters(CounterRegistry& registry) override {
    auto add = [&](const char* key, std::uint64_t PythonCallCounters::*field) {
      registry.add(agent_counter(key), [this, field] { return pairing_.counters().*field; });
    };
    add("python_calls", &PythonCallCounters::calls);
    add("python_unpaired", &PythonCallCounters::unpaired);
    add("python_filtered", &PythonCallCounters::filtered);
    add("python_unreturned", &PythonCallCounters::unreturned);
    add("python_orphan_returns", &PythonCallCounters::orphan_returns);
  }

 private:
  PythonCalls pairing_;
};

}  // namespace

std::unique_ptr<Enricher> make_nccl_comm_stage() { return std::make_unique<NcclCommStage>(); }
std::unique_ptr<Enricher> make_kernel_name_stage(std::shared_ptr<const ProcessMapsCache> remembered) {
  return std::make_unique<KernelNameStage>(std::move(remembered));
}
std::unique_ptr<Enricher> make_graph_capture_stage() { return std::make_unique<GraphCaptureStage>(); }
std::unique_ptr<Enricher> make_python_pairing_stage(std::string file_filter) {
  return std::make_unique<PythonPairingStage>(std::move(file_filter));
}

}  // namespace eacgm::ingest
