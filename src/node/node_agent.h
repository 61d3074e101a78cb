// NodeAgent: the node agent as one object. From its options it loads the configuration,
// names the pods (the kubelet's source, when given), reads each process's facts, keeps
// the live analysis, writes the history, serves the HTTP routes and on-demand captures,
// hands freed memory back, and runs the trace again on a reload. `eacgm serve` runs it in
// the foreground until a signal (node/serve.h); `top` and the Python module run it on a
// thread of their own. Everything that can fail at start-up fails in create().
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "agent/trace_setup.h"
#include "core/result.h"
#include "sample/pod_directory.h"

namespace eacgm::analysis {
struct AnalysisSnapshot;
}  // namespace eacgm::analysis

namespace eacgm::node {

struct NodeOptions {
  std::string config_path;      // "" : the embedded defaults
  agent::TraceRequest request;  // probes, BTF, mode, GPU sampling, a side command (its job is kServe)
  std::string listen;           // HOST:PORT; "" : [serve] listen (port 0: the system picks one)
  // The bearer-token file: unset, [serve] token_file; "" none (a loopback-only agent).
  std::optional<std::string> token_file;
  // Where other machines reach the agent's API, as the fleet's store lists it: "" :
  // [serve] advertise_url, else http://HOST:PORT of the listen address (a wildcard
  // address becomes the host's name).
  std::string advertise_url;
  bool history = true;      // false: no store at all (`top`'s own agent)
  std::string store;        // "" : [store] url; "off": none
  std::string node_name;    // "" : [store] node, else the host name
  std::string fleet_store;  // "" : [store] fleet_url (none when empty too)
  // Where pod names and GPU assignment come from when [kubernetes] enabled (the kubelet's
  // pod-resources client, kubelet/pod_resources_client.h); null: pods keep their UIDs.
  std::function<sample::PodResourcesList(const std::string& socket)> pod_source;
  bool trim_memory = true;  // hand freed memory back each MemoryTrim::kPeriod (a long-running agent)
  // The agent's notices (warnings, reloads); the caller prints or keeps them. Any thread.
  std::function<void(const std::string&)> notice;
};

class NodeAgent {
 public:
  // Loads and checks the configuration, resolves the listen address and the store, opens
  // the store and starts serving (the port is bound when this returns). The error's
  // message names what to change ("--listen: ...", "[store] url: ..."); its kind is kUsage.
  static Result<std::unique_ptr<NodeAgent>> create(NodeOptions options);
  ~NodeAgent();  // stop()
  NodeAgent(const NodeAgent&) = delete;
  NodeAgent& operator=(const NodeAgent&) = delete;

  // Starts the history's writer and traces until `stop` is non-zero; a `reload` reads
  // the configuration again (a bad one leaves the running trace). Then writes the last
  // interval and stops serving. Returns 0, or the trace's start-up failure's exit code.
  int run(const std::atomic<int>& stop, std::atomic<bool>& reload);
  // run() on a thread of its own; returns once the probes are attached (the first
  // snapshot is out), or with the trace's last notice when it ended or was not ready
  // within `ready_within`.
  Status run_in_background(std::chrono::seconds ready_within);
  // Ends a run in the background and stops serving; idempotent.
  void stop();

  std::uint16_t port() const;
  // http://HOST:PORT (IPv6 hosts bracketed).
  std::string url() const;
  // Where the history goes ("" none), and its node and interval, for the start-up lines.
  std::string history_line() const;
  // The last published analysis snapshot (nullptr before the first).
  std::shared_ptr<const analysis::AnalysisSnapshot> snapshot() const;
  // The last notice the agent gave ("" before the first); any thread.
  std::string last_notice() const;

  struct Parts;  // what create() made (node_agent.cpp)

 private:
  explicit NodeAgent(std::unique_ptr<Parts> parts);

  std::unique_ptr<Parts> parts_;
  std::thread thread_;  // run_in_background's
  std::atomic<int> stop_{0};
  std::atomic<bool> reload_{false};
  std::atomic<bool> ended_{false};
};

// create(), then run_in_background(): the agent `top` and the Python module start.
Result<std::unique_ptr<NodeAgent>> start_in_background(
    NodeOptions options, std::chrono::seconds ready_within = std::chrono::seconds(60));

}  // namespace eacgm::node
