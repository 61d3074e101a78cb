// ConsumerList: every member gets every call, in the order they were added.
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

}  // namespace
}  // namespace eacgm
