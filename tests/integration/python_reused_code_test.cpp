// Integration test (root, real eBPF): code objects freed and others allocated at their
// addresses, in pyenv's CPython 3.12. A script makes functions with exec, each with its
// own name and file (gen_N in "<gen N>"), runs each for 50 ms under N + 1 frames of
// `descend`, and deletes it a few functions later; pymalloc then gives a later, larger
// function the address of an earlier one of its size class. Every sampled frame must be
// named after the function that ran: gen_N only in "<gen N>" and only under N + 1
// `descend` frames (a name kept from the address's former code object puts gen_M there),
// and the re-reads are counted.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "subprocess.h"

namespace eacgm::test {
namespace {

// The check that finds a reused address sees only an instruction past the former code's
// end, so each function is larger than any earlier one of its size class by more than
// the code after its hot instruction: gen_N spends its time in `sum` (its CALL, 5 units
// from its end), and a pair sharing a pymalloc size class (16 bytes: 4 pad statements)
// differs by 3 pad statements (6 units). Functions are deleted only after the next four
// have run (200 ms), after their last samples were named (the reader waits at most 100
// ms), and pairs are made 400 ms apart, so a freed function's address is reused by its
// pair only.
constexpr const char* kScript = R"(import time

PAIRS = 8     # functions of two sizes per size class
SPIN = 0.05   # seconds each function runs
KEEP = 4      # functions kept alive after their run

def make(n, pad):
    body = "".join("    p%d = %d\n" % (i, i) for i in range(pad))
    ns = {}
    exec(compile("def gen_%d(r):\n%s    return sum(r)\n" % (n, body), "<gen %d>" % n, "exec"), ns)
    return ns.pop("gen_%d" % n)  # the only reference: deleting it frees its code

def descend(d, f, r):
    if d:
        return descend(d - 1, f, r)
    return f(r)

def main():
    r = range(10 ** 6)
    pads = [8 * i + 3 for i in range(PAIRS)] + [8 * i + 6 for i in range(PAIRS)]
    alive, addresses, reused = [], {}, 0
    for n, pad in enumerate(pads):
        f = make(n, pad)
        a = id(f.__code__)
        if a in addresses:
            reused += 1
            print("gen_%d at gen_%d's address" % (n, addresses[a]), flush=True)
        addresses[a] = n
        until = time.perf_counter() + SPIN
        while time.perf_counter() < until:
            descend(n, f, r)
        alive.append(f)
        del f
        if len(alive) > KEEP:
            del alive[0]
    # Alive until the last samples are named.
    until = time.perf_counter() + 0.3
    while time.perf_counter() < until:
        pass
    print("reused %d of %d" % (reused, len(pads)), flush=True)

main()
)";

constexpr int kFunctions = 16;

// A 3.12 interpreter from pyenv, or "".
std::string python312() {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/root/.pyenv/versions", ec)) {
    const auto exe = e.path() / "bin/python3.12";
    if (e.path().filename().string().starts_with("3.12.") && std::filesystem::exists(exe)) return exe;
  }
  return "";
}

struct Frame {
  std::string function, file;
};

// A folded line's frames, outermost first ("python3.12 (pid);f (file:line);... count").
std::vector<Frame> frames_of(const std::string& line) {
  std::vector<Frame> out;
  const std::string stack = line.substr(0, line.rfind(' '));
  std::stringstream ss(stack);
  std::string part;
  std::getline(ss, part, ';');  // the process
  const std::regex frame("(.*) \\((.*):[0-9]+\\)");
  while (std::getline(ss, part, ';')) {
    std::smatch m;
    if (std::regex_match(part, m, frame)) {
      out.push_back({m[1], m[2]});
    } else {
      out.push_back({part, ""});  // a frame named by its address has no file
    }
  }
  return out;
}

TEST(PythonReusedCode, FramesAreNamedAfterTheCodeThatRan) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (eBPF perf_event programs)";
  const std::string exe = python312();
  if (exe.empty()) GTEST_SKIP() << "no /root/.pyenv/versions/3.12.*/bin/python3.12";
  const std::string dir = temp_dir();
  const std::string script = dir + "/reuse.py";
  std::ofstream(script) << kScript;
  const std::string folded = dir + "/stacks.folded";
  Subprocess p({bin("eacgm"), "run", "--no-gpu", "--python-hz", "997", "--folded", folded, "--", exe, script},
               dir);
  ASSERT_EQ(p.wait(), 0) << p.err();
  const std::string said = p.out() + p.err();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(said, m, std::regex("reused ([0-9]+) of 16"))) << said;
  const int reused = std::stoi(m[1]);
  // pymalloc's reuse is deterministic for this script (five of the eight pairs on 3.12.1);
  // without one the test would prove nothing.
  ASSERT_GE(reused, 1) << said;

  const std::regex gen_name("gen_([0-9]+)"), gen_file("<gen ([0-9]+)>");
  std::set<int> seen;
  int unnamed = 0;
  std::istringstream text(read_file(folded));
  std::string line;
  while (std::getline(text, line)) {
    if (!line.starts_with("python3.12 (")) continue;
    const auto frames = frames_of(line);
    int depth = 0;  // descend frames so far, from the outermost
    for (const Frame& f : frames) {
      std::smatch n;
      if (f.function == "descend" && f.file == script) {
        ++depth;
      } else if (std::regex_match(f.function, n, gen_name)) {
        const int id = std::stoi(n[1]);
        seen.insert(id);
        EXPECT_EQ(f.file, "<gen " + std::to_string(id) + ">") << line;
        EXPECT_EQ(depth, id + 1) << "gen_" << id << " sampled under another function's callers: " << line;
      } else if (std::regex_match(f.file, n, gen_file)) {
        // Only its module body (run by exec) shares a function's file.
        EXPECT_EQ(f.function, "<module>") << line;
      } else if (f.function.starts_with("<code 0x")) {
        ++unnamed;  // read after it was freed: not named, never named wrongly
      }
    }
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kFunctions)) << read_file(folded);
  // Each reused address was found out by a sample past the former code's end.
  ASSERT_TRUE(std::regex_search(said, m, std::regex("py_codes_reread=([0-9]+)"))) << said;
  EXPECT_GE(std::stoi(m[1]), reused) << said;
  RecordProperty("unnamed_stacks", unnamed);
}

}  // namespace
}  // namespace eacgm::test
