// The hot spots section of `eacgm run`: the note on what the numbers are, shares of the
// samples in Python code, hot lines, threads; nothing when nothing was sampled.
#include "export/python_hot_spots_table.h"

#include <gtest/gtest.h>

namespace eacgm::exporting {
namespace {

TEST(PythonHotSpotsTable, EmptyWithoutSamples) {
  EXPECT_EQ(render_python_hot_spots(analysis::PythonHotSpots{}), "");
}

TEST(PythonHotSpotsTable, SharesLinesAndThreads) {
  auto hot_fn = std::make_shared<const PythonCode>(PythonCode{"hot", "/app/x.py", 3});
  auto main_fn = std::make_shared<const PythonCode>(PythonCode{"main", "/app/x.py", 15});
  analysis::PythonProfile p(99);
  for (int i = 0; i < 3; ++i) {
    PythonStack s;
    s.pid = 7;
    s.tid = i == 2 ? 8 : 7;
    s.comm = "python3.12";
    s.frames = {{hot_fn, 6}, {main_fn, 20}};
    p.add(s);
  }
  PythonStack idle;
  idle.pid = 7;
  idle.tid = 7;
  idle.comm = "python3.12";
  p.add(idle);
  EXPECT_EQ(
      render_python_hot_spots(p.hot_spots()),
      "Python hot spots (sampled; sampled at 99 Hz per CPU; shares of on-CPU samples, not exact calls or "
      "times)\n"
      "python3.12 (pid 7): 4 samples, 3 in Python code, 2 threads\n"
      "self%  total%  self  total  function  file:line\n"
      "100.0   100.0     3      3  hot       /app/x.py:3\n"
      "  0.0   100.0     0      3  main      /app/x.py:15\n"
      "self%  self  hot line     in\n"
      "100.0     3  /app/x.py:6  hot\n"
      "threads (samples): 7 (3) 8 (1)\n");
}

// A traced call in the stacks: its row says so instead of a file, and the hot lines say
// which call each line waited in.
TEST(PythonHotSpotsTable, TracedCallsAndTheLinesThatWaitInThem) {
  auto step = std::make_shared<const PythonCode>(PythonCode{"step", "/app/x.py", 3});
  auto sync =
      std::make_shared<const PythonCode>(PythonCode{"[cuda_driver] cuStreamSynchronize", "", 0, true});
  analysis::PythonProfile p(99);
  for (int i = 0; i < 4; ++i) {
    PythonStack s;
    s.pid = 7;
    s.tid = 7;
    s.comm = "python3.12";
    s.frames = {{step, 6}};
    if (i < 3) s.frames.insert(s.frames.begin(), PythonFrame{sync, 0});
    p.add(s);
  }
  EXPECT_EQ(
      render_python_hot_spots(p.hot_spots()),
      "Python hot spots (sampled; sampled at 99 Hz per CPU; shares of on-CPU samples, not exact calls or "
      "times)\n"
      "python3.12 (pid 7): 4 samples, 4 in Python code\n"
      "self%  total%  self  total  function                           file:line\n"
      " 75.0    75.0     3      3  [cuda_driver] cuStreamSynchronize  (traced call)\n"
      " 25.0   100.0     1      4  step                               /app/x.py:3\n"
      "self%  self  hot line     in    in call\n"
      " 75.0     3  /app/x.py:6  step  [cuda_driver] cuStreamSynchronize\n"
      " 25.0     1  /app/x.py:6  step  -\n");
}

}  // namespace
}  // namespace eacgm::exporting
