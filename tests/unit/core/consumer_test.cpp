// ConsumerList: every member gets every call, in the order they were added;
// ForwardingConsumer: its inner consumer gets every call not overridden.
#include "core/consumer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace eacgm {
namespace {

class Recorder final : public Consumer {
 public:
  Recorder(std::string name, std::vector<std::string>& log) : name_(std::move(name)), log_(log) {}
  void on_calls(std::span<const CallEvent> calls) override {
    log_.push_back(name_ + ":calls" + std::to_string(calls.size()) + ":" + std::to_string(calls.front().pid));
  }
  void on_gpu(const GpuSnapshot& s) override {
    log_.push_back(name_ + ":gpu" + std::to_string(s.devices.size()));
  }
  void on_host_waits(std::span<const HostWaitProcess> processes,
                     std::span<const HostWaitTimings> waits) override {
    log_.push_back(name_ + ":waits" + std::to_string(processes.size()) + "/" + std::to_string(waits.size()));
  }
  void on_tick(std::chrono::steady_clock::time_point, const CounterValues&) override {
    log_.push_back(name_ + ":tick");
  }
  void flush() override { log_.push_back(name_ + ":flush"); }
  void on_end(const CounterValues& c) override {
    log_.push_back(name_ + ":end" + std::to_string(c.get("n")));
  }

 private:
  std::string name_;
  std::vector<std::string>& log_;
};

TEST(ConsumerList, HandsEachCallToEveryMemberInOrder) {
  std::vector<std::string> log;
  ConsumerList list;
  EXPECT_TRUE(list.empty());
  list.add(std::make_shared<Recorder>("a", log));
  list.add(std::make_shared<Recorder>("b", log));
  std::vector<CallEvent> calls(3);
  calls[0].pid = 42;
  list.on_calls(calls);
  GpuSnapshot snap;
  snap.devices.resize(2);
  list.on_gpu(snap);
  list.on_host_waits(std::vector<HostWaitProcess>(1), std::vector<HostWaitTimings>(4));
  list.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  list.flush();
  CounterValues values;
  values.values.push_back(
      {std::make_shared<const CounterDef>(
           CounterDef{"n", "eacgm_n_total", "", "", CounterKind::kCounter, CounterShow::kAlways, ""}),
       9});
  list.on_end(values);
  EXPECT_EQ(log, (std::vector<std::string>{"a:calls3:42", "b:calls3:42", "a:gpu2", "b:gpu2", "a:waits1/4",
                                           "b:waits1/4", "a:tick", "b:tick", "a:flush", "b:flush", "a:end9",
                                           "b:end9"}));
}

TEST(ConsumerList, AListCanHoldAList) {
  std::vector<std::string> log;
  auto inner = std::make_shared<ConsumerList>();
  inner->add(std::make_shared<Recorder>("in", log));
  ConsumerList outer;
  outer.add(inner);
  outer.add(std::make_shared<Recorder>("out", log));
  outer.flush();
  EXPECT_EQ(log, (std::vector<std::string>{"in:flush", "out:flush"}));
}

// Every method, by name, as it arrives.
class EveryCall final : public Consumer {
 public:
  void on_calls(std::span<const CallEvent>) override { seen.push_back("calls"); }
  void on_counts(std::span<const CallCount>, std::span<const CallTimings>) override {
    seen.push_back("counts");
  }
  void on_gpu(const GpuSnapshot&) override { seen.push_back("gpu"); }
  void on_host_waits(std::span<const HostWaitProcess>, std::span<const HostWaitTimings>) override {
    seen.push_back("host_waits");
  }
  void on_overhead(const OverheadReport&) override { seen.push_back("overhead"); }
  void on_python_stacks(std::span<const PythonStack>) override { seen.push_back("python_stacks"); }
  void on_tick(std::chrono::steady_clock::time_point, const CounterValues&) override {
    seen.push_back("tick");
  }
  void flush() override { seen.push_back("flush"); }
  void on_end(const CounterValues&) override { seen.push_back("end"); }
  std::vector<std::string> seen;
};

TEST(ForwardingConsumer, PassesEveryCallOn) {
  auto inner = std::make_shared<EveryCall>();
  ForwardingConsumer front(inner);
  Consumer& c = front;
  c.on_calls({});
  c.on_counts({}, {});
  c.on_gpu(GpuSnapshot{});
  c.on_host_waits({}, {});
  c.on_overhead(OverheadReport{});
  c.on_python_stacks({});
  c.on_tick(std::chrono::steady_clock::now(), CounterValues{});
  c.flush();
  c.on_end(CounterValues{});
  EXPECT_EQ(inner->seen, (std::vector<std::string>{"calls", "counts", "gpu", "host_waits", "overhead",
                                                   "python_stacks", "tick", "flush", "end"}));
}

// A wrapper that overrides one call still passes the others on.
TEST(ForwardingConsumer, OverridesOnlyWhatItChanges) {
  class DropsFlush final : public ForwardingConsumer {
   public:
    using ForwardingConsumer::ForwardingConsumer;
    void flush() override {}
  };
  auto inner = std::make_shared<EveryCall>();
  DropsFlush front(inner);
  front.flush();
  front.on_gpu(GpuSnapshot{});
  EXPECT_EQ(inner->seen, (std::vector<std::string>{"gpu"}));
}

}  // namespace
}  // namespace eacgm
