// CUDA graphs: follows stream capture (begin/end, streams joined through events),
// explicit node additions, instantiation, update and destruction per process, so that
// work recorded into a graph is marked `captured` (recorded, not executed) and each
// graph launch carries what its executable graph holds (CallEvent::graph). Counts and
// names are exact for graphs made while tracing; per-node GPU timing is not known (the
// nodes run inside the driver, with no call to probe).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/call_event.h"
#include "core/work_rule.h"

namespace eacgm::ingest {

struct GraphCaptureCounters {
  std::uint64_t graph_launches = 0;          // launches of a known executable graph
  std::uint64_t graph_launches_unknown = 0;  // launches of an executable graph not seen made
  std::uint64_t captured_calls = 0;          // work recorded into graphs
};

class GraphCapture {
 public:
  struct Options {
    std::size_t max_graphs_per_pid = 4096;   // graphs, executable graphs, capturing streams each
    std::size_t max_items_per_graph = 4096;  // distinct (kind, name, direction); more fold into "(other)"
    std::size_t max_pids = 1024;
  };
  GraphCapture() : GraphCapture(Options{}) {}
  explicit GraphCapture(Options options) : options_(options) {}

  // Called after kernel names are known (the kernel-name stage runs first).
  void enrich(CallEvent& event);
  void forget(std::uint32_t pid) { processes_.erase(pid); }
  std::vector<std::uint32_t> pids() const;
  const GraphCaptureCounters& counters() const { return counters_; }

 private:
  struct Builder {
    std::map<std::tuple<GpuWork, std::string, std::string>, GraphWorkItem> items;
    std::uint64_t nodes = 0;
  };
  struct Process {
    std::unordered_map<std::uint64_t, std::shared_ptr<Builder>> capturing;  // stream -> its capture
    std::unordered_map<std::uint64_t, std::shared_ptr<Builder>> events;     // event recorded in a capture
    std::unordered_map<std::uint64_t, std::shared_ptr<Builder>> graphs;     // graph -> its contents
    std::unordered_map<std::uint64_t, std::shared_ptr<const GraphWork>> execs;
  };
  enum class Role : std::uint8_t {
    kNone,
    kWork,  // a kernel, memset or copy: captured when its stream is capturing
    kGraphNode,
    kGraphLaunch,
    kBeginCapture,
    kEndCapture,
    kInstantiate,
    kUpdate,
    kDestroyGraph,
    kDestroyExec,
    kEventRecord,
    kStreamWaitEvent,
  };
  struct ProbeRole {
    Role role = Role::kNone;
    WorkRule work;
    int stream = -1, graph = -1, exec = -1, event = -1;
    std::shared_ptr<const ProbeInfo> probe;
  };
  static ProbeRole make_role(const std::shared_ptr<const ProbeInfo>& probe);
  const ProbeRole& role(const std::shared_ptr<const ProbeInfo>& probe);
  void record(Builder& b, GpuWork kind, const CallEvent& event, const WorkRule& rule);
  static std::shared_ptr<const GraphWork> freeze(const Builder& b);
  Process& process(std::uint32_t pid);
  template <typename Map, typename Value>
  bool put(Map& map, std::uint64_t key, Value value);

  Options options_;
  GraphCaptureCounters counters_;
  std::vector<ProbeRole> roles_;  // by probe id
  ProbeRole uncached_;
  std::unordered_map<std::uint32_t, Process> processes_;
};

}  // namespace eacgm::ingest
