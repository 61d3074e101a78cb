// Checks both stores (SQLite and PostgreSQL) must pass alike, written once.
#pragma once

#include <gtest/gtest.h>

#include "history/store.h"
#include "store_batches.h"

namespace eacgm::history::test {

// GPU time rows (the hook's) are kept per process and kernel and summed like calls; a
// process's calls leave them out.
inline void check_gpu_time_rows_kept_apart(Store& store) {
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(store.write("n", batch_with_gpu_time(kT0 + kS * 10 * i, 7, 5, 400)));
  auto functions = store.functions(window(kT0, kT0 + 60 * kS), Tier::kRaw);
  ASSERT_TRUE(functions) << functions.error();
  const StoredFunction* gpu = nullptr;
  for (const auto& f : *functions) {
    if (f.domain == kGpuTimeDomain) gpu = &f;
  }
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->function, "gemm");
  EXPECT_EQ(gpu->calls, 1200u);
  EXPECT_EQ(gpu->timed, 30u);
  EXPECT_NEAR(gpu->latency.quantile(0.5), 50'000, 50'000 * 0.031);
  // A process's calls are its API calls: the launches its hook counted are not added.
  auto procs = store.processes(window(kT0, kT0 + 60 * kS), Tier::kRaw);
  ASSERT_TRUE(procs) << procs.error();
  ASSERT_EQ(procs->size(), 1u);
  EXPECT_EQ(procs->front().calls, 15u);
}

}  // namespace eacgm::history::test
