// CommFilter: passes on the calls of processes with chosen names (`--comm`, an exact
// match on the kernel's 15-character comm) and counts the rest per name, so that a
// trace of the whole machine shows one job and still says what the others did.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/consumer.h"
#include "core/pid_fifo.h"

namespace eacgm::analysis {

class CommFilter final : public ForwardingConsumer {
 public:
  // Names longer than the kernel keeps (15 bytes) are cut as the kernel cuts them.
  CommFilter(const std::vector<std::string>& names, std::shared_ptr<Consumer> inner);
  // How always-on counts (which carry a pid, not a comm) are matched: the process's name
  // (default: /proc/<pid>/comm, read once per pid; "" once it is gone).
  void set_comm_of(std::function<std::string(std::uint32_t pid)> comm_of) { comm_of_ = std::move(comm_of); }

  static constexpr std::size_t kCommMax = 15;
  // At most this many other names are counted apart; further ones are folded together.
  static constexpr std::size_t kMaxNamesCounted = 256;

  bool matches(std::string_view comm) const { return names_.count(std::string(comm)) > 0; }

  void on_calls(std::span<const CallEvent> calls) override;
  void on_counts(std::span<const CallCount> counts, std::span<const CallTimings> timings) override;
  void on_overhead(const OverheadReport& report) override;
  void on_host_waits(std::span<const HostWaitProcess> processes,
                     std::span<const HostWaitTimings> waits) override;
  void on_python_stacks(std::span<const PythonStack> stacks) override;
  void on_inflight(std::span<const InflightCall> calls, std::uint64_t scan_mono_ns) override;

  std::uint64_t passed() const { return passed_; }
  std::uint64_t left_out() const { return left_out_; }
  // Calls left out, per process name ("" holds the names past kMaxNamesCounted).
  const std::map<std::string, std::uint64_t>& left_out_by_comm() const { return others_; }
  // One line: "N calls of other processes not shown (name N, ...; M more names)", the
  // `most` busiest names first; empty when nothing was left out.
  std::string summary(std::size_t most = 5) const;

 private:
  // Whether a pid's process has one of the names (cached; the cache is bounded).
  bool pid_matches(std::uint32_t pid);
  void count_left_out(std::string_view comm, std::uint64_t calls);

  static constexpr std::size_t kMaxPidsCached = 8192;
  std::set<std::string> names_;
  std::function<std::string(std::uint32_t)> comm_of_;
  PidFifo<std::pair<bool, std::string>> pid_names_{kMaxPidsCached};  // pid -> (matches, comm)
  std::vector<CallCount> kept_counts_;
  std::vector<CallTimings> kept_timings_;
  std::vector<HostWaitProcess> kept_wait_processes_;
  std::vector<InflightCall> kept_inflight_;
  std::vector<HostWaitTimings> kept_waits_;
  std::vector<CallEvent> kept_;
  std::vector<PythonStack> kept_stacks_;
  std::map<std::string, std::uint64_t> others_;
  std::uint64_t passed_ = 0;
  std::uint64_t left_out_ = 0;
};

}  // namespace eacgm::analysis
