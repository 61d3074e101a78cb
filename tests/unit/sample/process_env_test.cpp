// Rank labels from a process's environment: the launchers' variables in order of
// preference, bad values ignored, a bounded read of /proc/<pid>/environ of a real child.
#include "sample/process_env.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace eacgm::sample {
namespace {

std::string block(const std::vector<std::string>& vars) {
  std::string out;
  for (const auto& v : vars) {
    out += v;
    out += '\0';
  }
  return out;
}

TEST(ProcessEnv, TorchrunVariablesWinOverSlurmAndMpi) {
  EXPECT_EQ(parse_rank_env(block({"PATH=/bin", "RANK=3", "LOCAL_RANK=1", "WORLD_SIZE=8"})),
            (RankInfo{3, 1, 8}));
  EXPECT_EQ(parse_rank_env(block({"SLURM_PROCID=5", "RANK=2", "SLURM_NTASKS=16", "SLURM_LOCALID=0"})),
            (RankInfo{2, 0, 16}));
  EXPECT_EQ(parse_rank_env(
                block({"OMPI_COMM_WORLD_RANK=7", "OMPI_COMM_WORLD_LOCAL_RANK=3", "OMPI_COMM_WORLD_SIZE=9"})),
            (RankInfo{7, 3, 9}));
  EXPECT_TRUE(parse_rank_env(block({"HOME=/root", "XRANK=1"})).empty());
  EXPECT_TRUE(parse_rank_env("").empty());
}

TEST(ProcessEnv, JobFromSlurmElseTorchrun) {
  EXPECT_EQ(parse_job_env(
                block({"SLURM_JOB_ID=4711", "SLURM_STEP_ID=2", "TORCHELASTIC_RUN_ID=abc", "HOSTNAME=n1"})),
            (JobIds{"4711", "2", "n1"}));
  EXPECT_EQ(parse_job_env(block({"TORCHELASTIC_RUN_ID=run-42", "SLURM_STEP_ID=2"})),
            (JobIds{"run-42", "", ""}));
  // torchrun's default run id names no job.
  EXPECT_EQ(parse_job_env(block({"TORCHELASTIC_RUN_ID=none"})), JobIds{});
  EXPECT_EQ(parse_job_env(""), JobIds{});
}

TEST(ProcessEnv, BadValuesAreIgnored) {
  const RankInfo r =
      parse_rank_env(block({"RANK=-1", "SLURM_PROCID=4", "LOCAL_RANK=x", "WORLD_SIZE=", "=odd", "NOEQ"}));
  EXPECT_EQ(r.rank, 4);  // RANK unusable: Slurm's
  EXPECT_EQ(r.local_rank, std::nullopt);
  EXPECT_EQ(r.world_size, std::nullopt);
}

std::size_t environ_size(const std::string& proc) {
  std::ifstream in(proc + "/environ", std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {}).size();
}

class Child {
 public:
  explicit Child(std::vector<std::string> env) {
    pid_ = ::fork();
    if (pid_ == 0) {
      std::vector<char*> envp;
      for (auto& e : env) envp.push_back(e.data());
      envp.push_back(nullptr);
      char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
      ::execve("/bin/sleep", argv, envp.data());
      ::_exit(127);
    }
    // Wait until the child has exec'd and its new environ is in place: the kernel points
    // /proc/<pid>/exe at the new program before it lays out the new stack, and environ
    // reads empty in between.
    const std::string proc = "/proc/" + std::to_string(pid_);
    for (int i = 0; i < 500; ++i) {
      char buf[64] = {};
      const ssize_t n = ::readlink((proc + "/exe").c_str(), buf, sizeof buf - 1);
      if (n > 0 && std::string(buf, static_cast<std::size_t>(n)).find("sleep") != std::string::npos &&
          environ_size(proc) > 0) {
        break;
      }
      ::usleep(2000);
    }
  }
  ~Child() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

TEST(ProcessEnv, ReadsAChildProcess) {
  Child child({"PATH=/usr/bin:/bin", "RANK=1", "LOCAL_RANK=1", "WORLD_SIZE=4", "SLURM_PROCID=9"});
  ASSERT_GT(child.pid(), 0);
  auto r = read_rank_info(child.pid());
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(*r, (RankInfo{1, 1, 4}));
}

TEST(ProcessEnv, ReadIsBoundedAndDropsACutEntry) {
  // RANK sits past the limit; WORLD_SIZE=12 is cut to "WORLD_SIZE=1" at the limit and
  // must not be read as 1.
  const std::string pad = "PAD=" + std::string(100, 'x');
  Child child({pad, "WORLD_SIZE=12", "RANK=5"});
  ASSERT_GT(child.pid(), 0);
  const std::size_t limit = pad.size() + 1 + std::string("WORLD_SIZE=1").size();
  auto r = read_rank_info(child.pid(), limit);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->empty()) << "rank " << r->rank.value_or(-1) << " world " << r->world_size.value_or(-1);
  auto full = read_rank_info(child.pid());
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(*full, (RankInfo{5, std::nullopt, 12}));
}

TEST(ProcessEnv, GoneProcessIsAnError) {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  auto r = read_rank_info(pid);
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace eacgm::sample
