// Adapters that make the naming tables and the Python pairing enricher stages, with
// their counters published for readers on other threads.
#include "ingest/enricher_stages.h"

#include <atomic>

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
    registry.add({"nccl_comm_evictions", "eacgm_nccl_communicator_evictions_total",
                  "NCCL communicators forgotten to make room (their later calls lack rank and size)", "",
                  CounterKind::kCounter, CounterShow::kNonZero, ""},
                 [this] { return evictions_.load(std::memory_order_relaxed); });
  }

 private:
  NcclCommTable table_;
  std::atomic<std::uint64_t> evictions_{0};
};

class KernelNameStage final : public Enricher {
 public:
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
    registry.add({"names_from_memory", "eacgm_kernel_names_from_memory_total",
                  "kernel name strings read again from the process's memory", "", CounterKind::kCounter,
                  CounterShow::kGroup, "names"},
                 [this] { return from_memory_.load(std::memory_order_relaxed); });
    registry.add({"names_unreadable", "eacgm_kernel_names_unreadable_total",
                  "kernel name strings that could not be read (process gone, or nothing there)", "",
                  CounterKind::kCounter, CounterShow::kGroup, "names"},
                 [this] { return unreadable_.load(std::memory_order_relaxed); });
  }

 private:
  KernelNames names_;
  std::atomic<std::uint64_t> from_memory_{0}, unreadable_{0};
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
    auto add = [&](const char* key, const char* metric, const char* help, CounterShow show,
                   std::uint64_t PythonCallCounters::*field) {
      registry.add(
          {key, metric, help, "", CounterKind::kCounter, show, show == CounterShow::kGroup ? "python" : ""},
          [this, field] { return pairing_.counters().*field; });
    };
    add("python_calls", "eacgm_python_calls_total", "Python calls passed on", CounterShow::kGroup,
        &PythonCallCounters::calls);
    add("python_unpaired", "eacgm_python_unpaired_total", "Python calls passed on without a duration",
        CounterShow::kGroup, &PythonCallCounters::unpaired);
    add("python_filtered", "eacgm_python_filtered_total", "Python calls left out by the file filter",
        CounterShow::kGroup, &PythonCallCounters::filtered);
    add("python_unreturned", "eacgm_python_unreturned_total", "Python entries skipped over by a later return",
        CounterShow::kNonZero, &PythonCallCounters::unreturned);
    add("python_orphan_returns", "eacgm_python_orphan_returns_total",
        "Python returns whose entry was not seen (not reported)", CounterShow::kNonZero,
        &PythonCallCounters::orphan_returns);
  }

 private:
  PythonCalls pairing_;
};

}  // namespace

std::unique_ptr<Enricher> make_nccl_comm_stage() { return std::make_unique<NcclCommStage>(); }
std::unique_ptr<Enricher> make_kernel_name_stage() { return std::make_unique<KernelNameStage>(); }
std::unique_ptr<Enricher> make_python_pairing_stage(std::string file_filter) {
  return std::make_unique<PythonPairingStage>(std::move(file_filter));
}

}  // namespace eacgm::ingest
