// The probes' estimated cost: the latest report, and per process its latest row (exited
// processes keep their final totals), bounded.
#include <map>

#include "analysis/analysis.h"
#include "analysis/environment.h"

namespace eacgm::analysis {
namespace {

class Overhead final : public Analysis {
 public:
  // Processes whose probe cost is kept (exited ones go first when over).
  static constexpr std::size_t kMaxRows = 4096;
  static constexpr std::size_t kMaxExitedRows = 1024;  // of kMaxRows

  Declaration declaration() const override {
    return {"overhead", Input::kOverhead, {typeid(OverheadReport)}};
  }
  void on_overhead(const OverheadReport& report) override {
    report_ = report;
    report_.processes.clear();
    for (const ProcessOverhead& row : report.processes) rows_[row.pid] = row;
    std::size_t exited = 0;
    for (const auto& [pid, row] : rows_) exited += row.exited ? 1 : 0;
    // Exited rows past the cap go (by pid, not by exit: the rows carry no exit time).
    for (auto it = rows_.begin(); it != rows_.end() && exited > kMaxExitedRows;) {
      if (!it->second.exited) {
        ++it;
        continue;
      }
      it = rows_.erase(it);
      --exited;
    }
    if (rows_.size() > kMaxRows) {
      for (auto it = rows_.begin(); it != rows_.end() && rows_.size() > kMaxRows;)
        it = it->second.exited ? rows_.erase(it) : std::next(it);
    }
  }
  void publish(SnapshotParts& parts, const Moment&, bool) override {
    OverheadReport out = report_;
    out.processes.reserve(rows_.size());
    for (const auto& [pid, row] : rows_) out.processes.push_back(row);
    parts.put(std::move(out));
  }

 private:
  OverheadReport report_;
  std::map<std::uint32_t, ProcessOverhead> rows_;  // bounded: kMaxRows
};

}  // namespace

std::unique_ptr<Analysis> make_overhead(const Environment&) { return std::make_unique<Overhead>(); }

}  // namespace eacgm::analysis
