// A GpuSampler on a SamplingLoop whose sink is a mailbox; the process list is reduced
// to the traced process trees on the sampling thread, before anything is copied out.
#include "sample/gpu_feed.h"

#include <algorithm>
#include <utility>

#include "core/signal_mask.h"
#include "sample/process_tree.h"

namespace eacgm::sample {

Result<std::unique_ptr<GpuFeed>> GpuFeed::start(const GpuFeedOptions& options,
                                                std::shared_ptr<SnapshotMailbox> mailbox) {
  GpuSamplerOptions so;
  so.processes = true;
  so.interval = std::chrono::duration_cast<std::chrono::microseconds>(options.interval);
  so.nvml_library = options.nvml_library;
  so.gpm = options.gpm;
  auto sampler = GpuSampler::open(so);
  if (!sampler) return std::move(sampler).take_error();
  std::unique_ptr<GpuFeed> feed(new GpuFeed(options, std::move(*sampler), std::move(mailbox)));

  // The sampling thread takes no signals: Ctrl-C belongs to the thread that ends the trace.
  auto loop = [&] {
    const AllSignalsBlocked blocked;
    return SamplingLoop::start(
        {options.interval, 0}, [f = feed.get()] { return f->pass(); },
        [mb = feed->mailbox_](GpuSnapshot s) { mb->post(std::move(s)); });
  }();
  if (!loop) return std::move(loop).take_error();
  feed->loop_ = std::move(*loop);
  return feed;
}

GpuFeed::GpuFeed(const GpuFeedOptions& options, std::unique_ptr<GpuSampler> sampler,
                 std::shared_ptr<SnapshotMailbox> mailbox)
    : options_(options),
      sampler_(std::move(sampler)),
      mailbox_(std::move(mailbox)),
      gpu_count_(sampler_->device_count()),
      gpm_count_(sampler_->gpm_count()) {}

GpuFeed::~GpuFeed() { stop(); }

GpuSnapshot GpuFeed::pass() {
  GpuSnapshot s = sampler_->sample();
  if (options_.filter_processes || options_.keep_process) {
    auto outside = [this](const ProcessSample& p) {
      return (options_.filter_processes && !in_process_tree(p.pid, options_.roots)) ||
             (options_.keep_process && !options_.keep_process(p.pid));
    };
    s.processes.erase(std::remove_if(s.processes.begin(), s.processes.end(), outside), s.processes.end());
  }
  return s;
}

void GpuFeed::stop() {
  if (stopped_ || !loop_) return;
  stopped_ = true;
  loop_->stop();
  if (Status st = loop_->wait(); !st) failure_ = st.error();
  // The loop's thread has been joined: this thread may use the sampler now.
  GpuSnapshot last = pass();
  last.sequence = loop_->passes();
  mailbox_->post(std::move(last));
}

// The loop's passes, and the last one that stop() ran.
std::uint64_t GpuFeed::passes() const { return (loop_ ? loop_->passes() : 0) + (stopped_ ? 1 : 0); }

std::uint64_t GpuFeed::skipped_deadlines() const { return loop_ ? loop_->skipped_deadlines() : 0; }

}  // namespace eacgm::sample
