// The Python profile: self and total counts per function (recursion counted once per
// sample), rows merged by name, per-thread rows, hot lines, and folded stacks.
#include "analysis/python_profile.h"

#include <gtest/gtest.h>

namespace eacgm::analysis {
namespace {

using Code = std::shared_ptr<const PythonCode>;

Code code(const char* function, int line, const char* file = "/app/x.py") {
  return std::make_shared<const PythonCode>(PythonCode{function, file, line});
}

// Frames innermost first, each at its function's first line + 1.
PythonStack stack(std::uint32_t tid, const std::vector<Code>& frames, std::uint32_t pid = 7) {
  PythonStack s;
  s.pid = pid;
  s.tid = tid;
  s.comm = "python3.12";
  for (const auto& c : frames) s.frames.push_back(PythonFrame{c, c->first_line + 1});
  return s;
}

const PythonFunctionRow* row(const std::vector<PythonFunctionRow>& rows, const std::string& f) {
  for (const auto& r : rows) {
    if (r.function == f) return &r;
  }
  return nullptr;
}

TEST(PythonProfile, SelfTotalAndRecursionCountedOnce) {
  const Code mod = code("<module>", 1), main = code("main", 10), fib = code("fib", 3),
             other = code("other", 20);
  PythonProfile p(99);
  for (int i = 0; i < 3; ++i) p.add(stack(7, {fib, fib, fib, main, mod}));
  p.add(stack(7, {other, main, mod}));
  p.add(stack(7, {}));  // a sample outside Python code
  const PythonHotSpots hot = p.hot_spots();
  EXPECT_EQ(hot.hz, 99u);
  EXPECT_EQ(hot.samples, 5u);
  ASSERT_EQ(hot.processes.size(), 1u);
  const auto& proc = hot.processes[0];
  EXPECT_EQ(proc.samples, 5u);
  EXPECT_EQ(proc.python_samples, 4u);
  ASSERT_GE(proc.functions.size(), 4u);
  EXPECT_EQ(proc.functions[0].function, "fib");  // by self first
  EXPECT_EQ(proc.functions[0].self, 3u);
  EXPECT_EQ(proc.functions[0].total, 3u);  // three frames a sample, once each
  EXPECT_EQ(row(proc.functions, "main")->total, 4u);
  EXPECT_EQ(row(proc.functions, "main")->self, 0u);
  EXPECT_EQ(row(proc.functions, "other")->self, 1u);
  ASSERT_FALSE(proc.lines.empty());
  EXPECT_EQ(proc.lines[0].function, "fib");
  EXPECT_EQ(proc.lines[0].line, 4);
  EXPECT_EQ(proc.lines[0].self, 3u);
}

TEST(PythonProfile, SameNameFileAndLineIsOneFunction) {
  // A function defined twice (two code objects) reads as one row and one folded frame.
  PythonProfile p;
  p.add(stack(7, {code("f", 3)}));
  p.add(stack(7, {code("f", 3)}));
  p.add(stack(7, {code("f", 3, "/app/y.py")}));
  const auto hot = p.hot_spots();
  const auto& rows = hot.processes[0].functions;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].file, "/app/x.py");
  EXPECT_EQ(rows[0].self, 2u);
  ASSERT_EQ(hot.folded.size(), 2u);
  EXPECT_EQ(hot.folded[0].stack, "python3.12 (7);f (/app/x.py:3)");
  EXPECT_EQ(hot.folded[0].samples, 2u);
  EXPECT_EQ(hot.folded[0].pid, 7u);
}

TEST(PythonProfile, ThreadsAndProcessesApart) {
  const Code a = code("a", 1), b = code("b", 5);
  PythonProfile p;
  p.add(stack(7, {a}));
  p.add(stack(7, {a}));
  p.add(stack(8, {b}));
  p.add(stack(9, {b}, 9));
  const auto hot = p.hot_spots();
  ASSERT_EQ(hot.processes.size(), 2u);
  const auto& proc = hot.processes[0];  // busiest first
  EXPECT_EQ(proc.pid, 7u);
  ASSERT_EQ(proc.threads.size(), 2u);
  EXPECT_EQ(proc.threads[0].tid, 7u);
  EXPECT_EQ(proc.threads[0].samples, 2u);
  ASSERT_EQ(proc.threads[0].functions.size(), 1u);
  EXPECT_EQ(proc.threads[0].functions[0].function, "a");
  EXPECT_EQ(proc.threads[1].functions[0].function, "b");
  EXPECT_EQ(hot.processes[1].pid, 9u);
}

TEST(PythonProfile, FoldedLinesOutermostFirst) {
  const Code mod = code("<module>", 1), main = code("main", 10), hot_fn = code("Hot.run", 3);
  PythonProfile p;
  p.add(stack(7, {hot_fn, main, mod}));
  p.add(stack(7, {hot_fn, main, mod}));
  p.add(stack(7, {main, mod}));
  const auto hot = p.hot_spots();
  EXPECT_EQ(folded_text(hot),
            "python3.12 (7);<module> (/app/x.py:1);main (/app/x.py:10) 1\n"
            "python3.12 (7);<module> (/app/x.py:1);main (/app/x.py:10);Hot.run (/app/x.py:3) 2\n");
}

TEST(PythonProfile, FoldedFrameHasNoSeparator) {
  EXPECT_EQ(folded_frame(PythonCode{"f;g", "/a;b.py", 2}), "f:g (/a:b.py:2)");
  EXPECT_EQ(folded_frame(PythonCode{"f\ng\x01", "/a.py", 2}), "f?g? (/a.py:2)");
}

TEST(PythonProfile, StacksPastTheCapAreCountedApart) {
  PythonProfileLimits limits;
  limits.max_stacks = 10;
  PythonProfile p(99, limits);
  std::vector<Code> codes;
  for (std::size_t i = 0; i < limits.max_stacks + 3; ++i) {
    codes.push_back(code("f", static_cast<int>(i) + 1));
    p.add(stack(7, {codes.back()}));
  }
  const auto hot = p.hot_spots();
  EXPECT_EQ(hot.stacks_over_cap, 3u);
  EXPECT_EQ(hot.over_cap.stacks, 3u);
  std::uint64_t past = 0;
  for (const auto& f : hot.folded) {
    if (f.stack == "python3.12 (7);[stacks past the cap]") past = f.samples;
  }
  EXPECT_EQ(past, 3u);
  EXPECT_EQ(hot.processes[0].python_samples, limits.max_stacks + 3);
  EXPECT_EQ(p.stacks(), limits.max_stacks);
}

TEST(PythonProfile, RowsPastTheCapAreCountedAndTheRestGoesOn) {
  PythonProfileLimits limits;
  limits.max_rows = 5;  // the thread, then (function, line) pairs
  PythonProfile p(99, limits);
  const Code a = code("a", 1), b = code("b", 10), c = code("c", 20);
  p.add(stack(7, {a}));  // thread, a, a's line: 3 rows
  p.add(stack(7, {b}));  // b, b's line: 5 rows
  p.add(stack(7, {c}));  // c has no room
  p.add(stack(7, {a}));  // a counts on
  EXPECT_EQ(p.rows(), 5u);
  const auto hot = p.hot_spots();
  EXPECT_EQ(hot.over_cap.rows, 1u);
  const auto& proc = hot.processes[0];
  EXPECT_EQ(proc.samples, 4u);
  EXPECT_EQ(row(proc.functions, "a")->self, 2u);
  EXPECT_EQ(row(proc.functions, "c"), nullptr);
  // Its stack is still kept: the folded stacks stay whole.
  EXPECT_EQ(folded_text(hot, 7u).find("c (/app/x.py:20) 1\n") != std::string::npos, true);
}

TEST(PythonProfile, ProcessesPastTheCapAreNotCounted) {
  PythonProfileLimits limits;
  limits.max_processes = 2;
  PythonProfile p(99, limits);
  const Code a = code("a", 1);
  p.add(stack(1, {a}, 1));
  p.add(stack(2, {a}, 2));
  p.add(stack(3, {a}, 3));
  p.add(stack(1, {a}, 1));
  const auto hot = p.hot_spots();
  EXPECT_EQ(hot.processes.size(), 2u);
  EXPECT_EQ(hot.samples, 3u);
  EXPECT_EQ(hot.over_cap.processes, 1u);
}

constexpr std::uint64_t kSecond = 1000000000;

PythonStack at(std::uint64_t s, PythonStack st) {
  st.ts_ns = s * kSecond;
  return st;
}

TEST(PythonProfile, WindowKeepsOnlyRecentSamples) {
  PythonProfileLimits limits;
  limits.window_ns = 100 * kSecond;  // slices of 20 s
  PythonProfile p(99, limits);
  const Code old_fn = code("old", 1), new_fn = code("new", 10);
  for (std::uint64_t s = 1000; s < 1010; ++s) p.add(at(s, stack(7, {old_fn})));
  for (std::uint64_t s = 1050; s < 1060; ++s) p.add(at(s, stack(7, {new_fn})));
  auto hot = p.hot_spots();
  EXPECT_EQ(hot.window_ns, 100 * kSecond);
  EXPECT_EQ(hot.samples, 20u);
  ASSERT_EQ(hot.processes.size(), 1u);
  EXPECT_EQ(hot.processes[0].functions.size(), 2u);
  const std::uint64_t rows_before = p.rows();

  // The slice of second 1000 began a window before 1100: it leaves with its rows.
  const std::uint64_t changes = p.changes();
  p.expire(1100 * kSecond);
  EXPECT_GT(p.changes(), changes);
  hot = p.hot_spots();
  EXPECT_EQ(hot.samples, 10u);
  ASSERT_EQ(hot.processes[0].functions.size(), 1u);
  EXPECT_EQ(hot.processes[0].functions[0].function, "new");
  EXPECT_EQ(hot.processes[0].functions[0].self, 10u);
  EXPECT_LT(p.rows(), rows_before);
  ASSERT_EQ(hot.folded.size(), 1u);
  EXPECT_EQ(hot.folded[0].stack, "python3.12 (7);new (/app/x.py:10)");

  // A process whose samples all left is gone (an exited one, say), and so are its keys.
  p.expire(1200 * kSecond);
  hot = p.hot_spots();
  EXPECT_TRUE(hot.processes.empty());
  EXPECT_EQ(p.rows(), 0u);
  EXPECT_EQ(p.stacks(), 0u);
  EXPECT_EQ(p.processes(), 0u);
}

TEST(PythonProfile, WindowMergesSlicesAndStaysBounded) {
  PythonProfileLimits limits;
  limits.window_ns = 50 * kSecond;  // slices of 10 s
  limits.max_rows = 200;
  limits.max_stacks = 50;
  PythonProfile p(99, limits);
  std::vector<Code> codes(40);
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = code("f", static_cast<int>(i) * 10 + 1);
  const Code hot_fn = code("hot", 1000);
  // An hour of samples, a new function every 5 s and the hot one every second: memory
  // stays within the caps, and the hot function stays on top across slices.
  for (std::uint64_t s = 0; s < 3600; ++s) {
    p.add(at(s, stack(7, {hot_fn})));
    p.add(at(s, stack(7, {hot_fn})));
    p.add(at(s, stack(7, {codes[(s / 5) % codes.size()]})));
    EXPECT_LE(p.rows(), limits.max_rows);
    EXPECT_LE(p.stacks(), limits.max_stacks);
  }
  const auto hot = p.hot_spots();
  ASSERT_EQ(hot.processes.size(), 1u);
  const auto& f = hot.processes[0].functions;
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].function, "hot");
  // 40 to 50 seconds of samples, three a second.
  EXPECT_GE(hot.samples, 3u * 40);
  EXPECT_LE(hot.samples, 3u * 50);
  EXPECT_EQ(f[0].self * 3, hot.samples * 2);
}

// A sample inside a traced call: the call is the innermost frame (it has the self
// count, the Python caller the total), the line row is the caller's with the call, and
// the folded line ends in the call.
TEST(PythonProfile, NativeFrameEndsTheStack) {
  const Code main = code("main", 10), step = code("step", 20);
  const Code sync =
      std::make_shared<const PythonCode>(PythonCode{"[cuda_driver] cuStreamSynchronize", "", 0, true});
  PythonProfile p(99);
  for (int i = 0; i < 3; ++i) {
    PythonStack s = stack(7, {step, main});
    s.frames.insert(s.frames.begin(), PythonFrame{sync, 0});
    p.add(s);
  }
  p.add(stack(7, {step, main}));
  const auto hot = p.hot_spots();
  const auto& proc = hot.processes[0];
  EXPECT_EQ(proc.python_samples, 4u);
  const PythonFunctionRow* call = row(proc.functions, "[cuda_driver] cuStreamSynchronize");
  ASSERT_NE(call, nullptr);
  EXPECT_TRUE(call->native);
  EXPECT_EQ(call->self, 3u);
  EXPECT_EQ(proc.functions[0].function, "[cuda_driver] cuStreamSynchronize");
  EXPECT_EQ(row(proc.functions, "step")->self, 1u);
  EXPECT_EQ(row(proc.functions, "step")->total, 4u);
  EXPECT_FALSE(row(proc.functions, "step")->native);
  ASSERT_EQ(proc.lines.size(), 2u);
  EXPECT_EQ(proc.lines[0].function, "step");
  EXPECT_EQ(proc.lines[0].line, 21);
  EXPECT_EQ(proc.lines[0].call, "[cuda_driver] cuStreamSynchronize");
  EXPECT_EQ(proc.lines[0].self, 3u);
  EXPECT_EQ(proc.lines[1].call, "");
  EXPECT_EQ(folded_text(hot),
            "python3.12 (7);main (/app/x.py:10);step (/app/x.py:20) 1\n"
            "python3.12 (7);main (/app/x.py:10);step (/app/x.py:20);[cuda_driver] cuStreamSynchronize 3\n");
}

}  // namespace
}  // namespace eacgm::analysis
