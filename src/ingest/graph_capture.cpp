// Graph capture: per process, which streams capture into which graph, what each graph
// holds, and what each executable graph was instantiated from.
#include "ingest/graph_capture.h"

#include <string_view>

#include "probe/always_on.h"

namespace eacgm::ingest {
namespace {
std::optional<std::uint64_t> value(const CallEvent& e, int i) {
  if (i < 0 || i >= e.nargs || (e.fault_mask & (1u << i))) return std::nullopt;
  return e.args[static_cast<std::size_t>(i)];
}

bool succeeded(const CallEvent& e) { return e.has_exit && static_cast<std::int32_t>(e.ret) == 0; }

// The function without its per-thread-stream suffix (the same role either way).
std::string_view base_name(std::string_view name) {
  for (std::string_view suffix : {"_ptsz", "_ptds"}) {
    if (name.ends_with(suffix)) return name.substr(0, name.size() - suffix.size());
  }
  return name;
}

constexpr std::uint32_t kMaxCachedRoles = 1u << 20;

}  // namespace

GraphCapture::ProbeRole GraphCapture::make_role(const std::shared_ptr<const ProbeInfo>& probe) {
  ProbeRole r;
  r.probe = probe;
  const ProbeSpec& spec = probe->spec;
  r.work = WorkRule::of(spec);
  r.stream = arg_index(spec, "stream");
  r.graph = arg_index(spec, "graph");
  r.exec = arg_index(spec, "graph_exec");
  r.event = arg_index(spec, "event");
  switch (r.work.kind()) {
    case GpuWork::kKernel:
    case GpuWork::kMemset:
    case GpuWork::kCopy:
      r.role = Role::kWork;
      return r;
    case GpuWork::kGraphNode:
      r.role = Role::kGraphNode;
      return r;
    case GpuWork::kGraphLaunch:
      r.role = Role::kGraphLaunch;
      return r;
    case GpuWork::kNone:
      break;
  }
  const std::string_view fn = base_name(spec.name);
  const probe::CaptureBoundary boundary = probe::capture_boundary(fn);
  if (boundary == probe::CaptureBoundary::kBegin) {
    r.role = Role::kBeginCapture;
  } else if (boundary == probe::CaptureBoundary::kEnd) {
    r.role = Role::kEndCapture;
  } else if (fn == "cudaGraphInstantiate" || fn == "cudaGraphInstantiateWithFlags" ||
             fn == "cudaGraphInstantiateWithParams" || fn == "cuGraphInstantiateWithFlags" ||
             fn == "cuGraphInstantiateWithParams" || fn == "cuGraphInstantiate_v2") {
    r.role = Role::kInstantiate;
  } else if (fn == "cudaGraphExecUpdate" || fn == "cuGraphExecUpdate_v2") {
    r.role = Role::kUpdate;
  } else if (fn == "cudaGraphDestroy" || fn == "cuGraphDestroy") {
    r.role = Role::kDestroyGraph;
  } else if (fn == "cudaGraphExecDestroy" || fn == "cuGraphExecDestroy") {
    r.role = Role::kDestroyExec;
  } else if (fn == "cudaEventRecord") {
    r.role = Role::kEventRecord;
  } else if (fn == "cudaStreamWaitEvent") {
    r.role = Role::kStreamWaitEvent;
  }
  return r;
}

const GraphCapture::ProbeRole& GraphCapture::role(const std::shared_ptr<const ProbeInfo>& probe) {
  const std::uint32_t id = probe->id;
  if (id >= kMaxCachedRoles) {
    uncached_ = make_role(probe);
    return uncached_;
  }
  if (id >= roles_.size()) roles_.resize(id + 1);
  ProbeRole& r = roles_[id];
  if (r.probe != probe) r = make_role(probe);
  return r;
}

std::vector<std::uint32_t> GraphCapture::pids() const {
  std::vector<std::uint32_t> out;
  out.reserve(processes_.size());
  for (const auto& [pid, p] : processes_) out.push_back(pid);
  return out;
}

GraphCapture::Process& GraphCapture::process(std::uint32_t pid) {
  if (!processes_.contains(pid) && processes_.size() >= options_.max_pids) {
    processes_.erase(processes_.begin());  // any: graphs of a process this old are rare
  }
  return processes_[pid];
}

template <typename Map, typename Value>
bool GraphCapture::put(Map& map, std::uint64_t key, Value value) {
  if (map.size() >= options_.max_graphs_per_pid && !map.contains(key)) return false;
  map[key] = std::move(value);
  return true;
}

void GraphCapture::record(Builder& b, GpuWork kind, const CallEvent& event, const WorkRule& rule) {
  std::string name = kind == GpuWork::kKernel ? event.kernel : std::string();
  std::string direction(rule.direction(event));
  auto key = std::make_tuple(kind, std::move(name), std::move(direction));
  auto it = b.items.find(key);
  if (it == b.items.end()) {
    if (b.items.size() >= options_.max_items_per_graph) std::get<1>(key) = "(other)";
    it = b.items.try_emplace(key, GraphWorkItem{kind, std::get<1>(key), std::get<2>(key), 0, 0, 0}).first;
  }
  ++it->second.count;
  ++b.nodes;
  if (kind == GpuWork::kKernel) return;
  if (auto bytes = rule.bytes(event)) {
    it->second.bytes += *bytes;
  } else {
    ++it->second.unknown_bytes;
  }
}

std::shared_ptr<const GraphWork> GraphCapture::freeze(const Builder& b) {
  auto out = std::make_shared<GraphWork>();
  out->nodes = b.nodes;
  out->items.reserve(b.items.size());
  for (const auto& [key, item] : b.items) out->items.push_back(item);
  return out;
}

void GraphCapture::enrich(CallEvent& event) {
  if (!event.probe) return;
  const ProbeRole& r = role(event.probe);
  if (r.role == Role::kNone) return;
  if (r.role == Role::kGraphLaunch) {
    auto it = processes_.find(event.pid);
    auto exec = value(event, r.exec);
    if (it != processes_.end() && exec) {
      if (auto e = it->second.execs.find(*exec); e != it->second.execs.end()) event.graph = e->second;
    }
    if (!event.nested) ++(event.graph ? counters_.graph_launches : counters_.graph_launches_unknown);
    return;
  }
  if (r.role == Role::kWork) {
    auto it = processes_.find(event.pid);
    if (it == processes_.end() || it->second.capturing.empty()) return;  // the common case
    auto c = it->second.capturing.find(r.work.stream(event));
    if (c == it->second.capturing.end()) return;
    event.captured = true;
    // Once per operation: a runtime call's nested driver call is the same one.
    if (!event.nested && succeeded(event)) {
      record(*c->second, r.work.kind(), event, r.work);
      ++counters_.captured_calls;
    }
    return;
  }
  if (r.role == Role::kGraphNode) {
    event.captured = true;
    auto graph = value(event, r.graph);
    if (event.nested || !succeeded(event) || !graph) return;
    Process& p = process(event.pid);
    auto& b = p.graphs[*graph];
    if (!b) b = std::make_shared<Builder>();
    record(*b, r.work.node_kind(), event, r.work);
    ++counters_.captured_calls;
    return;
  }
  if (!succeeded(event)) return;
  auto stream = value(event, r.stream);
  auto graph = value(event, r.graph);
  auto exec = value(event, r.exec);
  switch (r.role) {
    case Role::kBeginCapture: {
      if (!stream) return;
      Process& p = process(event.pid);
      if (p.capturing.contains(*stream)) return;  // the runtime's call and its driver call
      std::shared_ptr<Builder> b;
      if (graph) {  // ...ToGraph: into an existing graph
        b = p.graphs[*graph];
        if (!b) b = p.graphs[*graph] = std::make_shared<Builder>();
      } else {
        b = std::make_shared<Builder>();
      }
      put(p.capturing, *stream, b);
      return;
    }
    case Role::kEndCapture: {
      auto it = processes_.find(event.pid);
      if (it == processes_.end() || !stream) return;
      Process& p = it->second;
      auto c = p.capturing.find(*stream);
      if (c == p.capturing.end()) return;
      std::shared_ptr<Builder> b = c->second;
      // The capture ends on every stream that joined it, and its events with it.
      std::erase_if(p.capturing, [&](const auto& kv) { return kv.second == b; });
      std::erase_if(p.events, [&](const auto& kv) { return kv.second == b; });
      if (graph && *graph != 0) put(p.graphs, *graph, b);
      return;
    }
    case Role::kInstantiate:
    case Role::kUpdate: {
      auto it = processes_.find(event.pid);
      if (it == processes_.end() || !graph || !exec) return;
      Process& p = it->second;
      auto g = p.graphs.find(*graph);
      if (g == p.graphs.end()) {
        p.execs.erase(*exec);  // made from a graph not seen: unknown, not stale
        return;
      }
      put(p.execs, *exec, freeze(*g->second));
      return;
    }
    case Role::kDestroyGraph:
      if (auto it = processes_.find(event.pid); it != processes_.end() && graph)
        it->second.graphs.erase(*graph);
      return;
    case Role::kDestroyExec:
      if (auto it = processes_.find(event.pid); it != processes_.end() && exec) it->second.execs.erase(*exec);
      return;
    case Role::kEventRecord: {
      auto ev = value(event, r.event);
      auto it = processes_.find(event.pid);
      if (it == processes_.end() || !ev || !stream) return;
      Process& p = it->second;
      if (auto c = p.capturing.find(*stream); c != p.capturing.end()) {
        put(p.events, *ev, c->second);
      } else {
        p.events.erase(*ev);
      }
      return;
    }
    case Role::kStreamWaitEvent: {
      // A stream waiting on an event recorded in a capture joins that capture.
      auto ev = value(event, r.event);
      auto it = processes_.find(event.pid);
      if (it == processes_.end() || !ev || !stream) return;
      Process& p = it->second;
      if (auto e = p.events.find(*ev); e != p.events.end()) put(p.capturing, *stream, e->second);
      return;
    }
    default:
      return;
  }
}

}  // namespace eacgm::ingest
