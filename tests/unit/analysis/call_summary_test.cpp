// CallSummary: exact per-function counts and errors over a synthetic event stream,
// entry-only calls, key merging by name, the key cap, and row order.
#include "analysis/call_summary.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace eacgm::analysis {
namespace {

std::shared_ptr<const ProbeInfo> probe(std::string domain, std::string function,
                                       ReturnKind ret = ReturnKind::kInt32, bool with_exit = true) {
  auto p = std::make_shared<ProbeInfo>();
  p->function = function;
  p->symbol = function;
  p->library = "/usr/lib/libtest.so";
  p->spec.name = function;
  p->spec.domain = std::move(domain);
  p->spec.ret = ret;
  p->spec.with_exit = with_exit;
  return p;
}

CallEvent exit_event(const std::shared_ptr<const ProbeInfo>& p, std::uint64_t dur, std::int64_t ret = 0) {
  CallEvent e;
  e.probe = p;
  e.has_exit = true;
  e.dur_ns = dur;
  e.ret = ret;
  return e;
}

CallEvent entry_event(const std::shared_ptr<const ProbeInfo>& p, std::int64_t ret = 0) {
  CallEvent e;
  e.probe = p;
  e.has_exit = false;
  e.ret = ret;  // garbage for entry-only records: must not count as an error
  return e;
}

const CallSummaryRow* find(const std::vector<CallSummaryRow>& rows, const std::string& function) {
  for (const auto& r : rows) {
    if (r.function == function) return &r;
  }
  return nullptr;
}

// Errors are broken down by result code, most frequent first; successes and
// entry-only calls add none, and past kMaxErrorCodes codes only `errors` counts.
TEST(CallSummary, CountsErrorsPerCode) {
  auto malloc_probe = probe("cuda", "cudaMalloc");
  auto alloc_probe = probe("cuda", "aligned_alloc", ReturnKind::kPointer);
  CallSummary s;
  for (int i = 0; i < 3; ++i) s.add(exit_event(malloc_probe, 10, 2));
  s.add(exit_event(malloc_probe, 10, 35));
  s.add(exit_event(malloc_probe, 10, 0));
  s.add(entry_event(malloc_probe, 7));
  s.add(exit_event(malloc_probe, 10, 0x1'0000'0001));  // int32 code: the low word, 1
  s.add(exit_event(alloc_probe, 10, 0));               // null pointer
  s.add(exit_event(alloc_probe, 10, 0x7f00));
  const auto rows = s.rows();
  const auto* m = find(rows, "cudaMalloc");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->errors, 5u);
  ASSERT_EQ(m->error_codes.size(), 3u);
  EXPECT_EQ(m->error_codes[0].code, 2);
  EXPECT_EQ(m->error_codes[0].count, 3u);
  EXPECT_EQ(m->error_codes[1].code, 1);  // ties by code
  EXPECT_EQ(m->error_codes[1].count, 1u);
  EXPECT_EQ(m->error_codes[2].code, 35);
  const auto* a = find(rows, "aligned_alloc");
  ASSERT_NE(a, nullptr);
  ASSERT_EQ(a->error_codes.size(), 1u);
  EXPECT_EQ(a->error_codes[0].code, 0);
  EXPECT_EQ(a->error_codes[0].count, 1u);

  CallSummary capped;
  for (int code = 1; code <= static_cast<int>(CallSummary::kMaxErrorCodes) + 4; ++code) {
    capped.add(exit_event(malloc_probe, 10, code));
  }
  EXPECT_EQ(capped.rows()[0].errors, CallSummary::kMaxErrorCodes + 4);
  EXPECT_EQ(capped.rows()[0].error_codes.size(), CallSummary::kMaxErrorCodes);
}

TEST(CallSummary, CountsErrorsAndDurationsExactly) {
  auto malloc_probe = probe("cuda", "cudaMalloc");
  auto launch_probe = probe("cuda", "cudaLaunchKernel");
  auto comm_probe = probe("nccl", "ncclAllReduce");
  CallSummary s;
  // cudaMalloc: 300 calls, every 10th fails with cudaErrorMemoryAllocation (2).
  std::uint64_t malloc_total = 0;
  for (int i = 0; i < 300; ++i) {
    const std::uint64_t dur = 1000 + static_cast<std::uint64_t>(i);
    malloc_total += dur;
    s.add(exit_event(malloc_probe, dur, i % 10 == 0 ? 2 : 0));
  }
  // cudaLaunchKernel: 1000 fast successful calls.
  for (int i = 0; i < 1000; ++i) s.add(exit_event(launch_probe, 50));
  // ncclAllReduce: one slow call that returns ncclUnhandledCudaError (1).
  s.add(exit_event(comm_probe, 5'000'000, 1));

  EXPECT_EQ(s.total_events(), 1301u);
  EXPECT_EQ(s.key_count(), 3u);
  EXPECT_EQ(s.overflow_events(), 0u);
  const auto rows = s.rows();
  ASSERT_EQ(rows.size(), 3u);
  // Sorted by total duration: 5 ms > 300 * ~1.15 us > 1000 * 50 ns.
  EXPECT_EQ(rows[0].function, "ncclAllReduce");
  EXPECT_EQ(rows[1].function, "cudaMalloc");
  EXPECT_EQ(rows[2].function, "cudaLaunchKernel");

  const auto& m = rows[1];
  EXPECT_EQ(m.domain, "cuda");
  EXPECT_EQ(m.calls, 300u);
  EXPECT_EQ(m.errors, 30u);
  EXPECT_EQ(m.entry_only, 0u);
  EXPECT_EQ(m.timed, 300u);
  EXPECT_EQ(m.total_ns, malloc_total);
  EXPECT_DOUBLE_EQ(m.mean_ns, static_cast<double>(malloc_total) / 300.0);
  EXPECT_EQ(m.max_ns, 1299u);
  EXPECT_NEAR(m.p50_ns, 1149.0, 1149.0 * 0.01);  // nearest rank ceil(0.5 * 300) = 150th
  EXPECT_NEAR(m.p99_ns, 1296.0, 1296.0 * 0.01);  // nearest rank ceil(0.99 * 300) = 297th

  EXPECT_EQ(rows[2].calls, 1000u);
  EXPECT_EQ(rows[2].errors, 0u);
  EXPECT_EQ(rows[2].total_ns, 50'000u);
  EXPECT_EQ(rows[2].p50_ns, 50.0);
  EXPECT_EQ(rows[0].errors, 1u);
  EXPECT_EQ(rows[0].max_ns, 5'000'000u);
}

TEST(CallSummary, EntryOnlyCallsAreCountedButNotTimed) {
  auto py = probe("python", "train_step", ReturnKind::kNone, /*with_exit=*/false);
  auto sync = probe("cuda", "cudaDeviceSynchronize");
  CallSummary s;
  for (int i = 0; i < 7; ++i) s.add(entry_event(py, 99));
  s.add(exit_event(sync, 10));
  s.add(entry_event(sync, 3));  // an entry whose exit was missed
  const auto rows = s.rows();
  const auto* p = find(rows, "train_step");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->calls, 7u);
  EXPECT_EQ(p->entry_only, 7u);
  EXPECT_EQ(p->timed, 0u);
  EXPECT_EQ(p->errors, 0u);
  EXPECT_EQ(p->total_ns, 0u);
  EXPECT_EQ(p->max_ns, 0u);
  EXPECT_EQ(p->p99_ns, 0.0);
  const auto* c = find(rows, "cudaDeviceSynchronize");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->calls, 2u);
  EXPECT_EQ(c->entry_only, 1u);
  EXPECT_EQ(c->timed, 1u);
  EXPECT_EQ(c->errors, 0u);
  EXPECT_EQ(c->total_ns, 10u);
  // Rows sort by total duration, not calls: 10 ns beats 7 untimed calls.
  EXPECT_EQ(rows[0].function, "cudaDeviceSynchronize");
}

// A per-call probe counted at entry too (always-on): its calls come from the count, its
// durations and errors from the records that reached user space, and the total time of
// the calls whose records were dropped is estimated from the others.
TEST(CallSummary, TalliedCallsAreCountedOnceWhateverTheirRecords) {
  auto info = std::make_shared<ProbeInfo>(*probe("cuda", "cudaMalloc"));
  info->tallied = true;
  std::shared_ptr<const ProbeInfo> p = info;
  CallSummary s;
  CallCount count;
  count.pid = 1;
  count.probe = p;
  count.calls = 4;
  s.add(count);
  for (std::int64_t ret : {0, 0, 2}) {  // the fourth call's record was dropped
    CallEvent e = exit_event(p, 100, ret);
    e.tallied = true;
    s.add(e);
  }
  const auto rows = s.rows();
  const CallSummaryRow* r = find(rows, "cudaMalloc");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->calls, 4u);
  EXPECT_EQ(r->counted, 0u);  // each call has a record, unless the ring dropped it
  EXPECT_EQ(r->timed, 3u);
  EXPECT_EQ(r->errors, 1u);
  EXPECT_EQ(r->total_ns, 400u);
  EXPECT_EQ(s.total_events(), 4u);
}

TEST(CallSummary, PointerReturnErrorsAreNulls) {
  auto p = probe("cuda_driver", "cuGetErrorString_like", ReturnKind::kPointer);
  CallSummary s;
  s.add(exit_event(p, 5, 0));
  s.add(exit_event(p, 5, 0x7f0000001000));
  s.add(exit_event(p, 5, 0));
  EXPECT_EQ(s.rows().at(0).errors, 2u);
}

TEST(CallSummary, SameNameFromDifferentProbesIsOneKey) {
  // The same function attached in two libraries (or re-attached) shares a row.
  auto a = probe("cuda", "cudaMemcpy");
  auto b = probe("cuda", "cudaMemcpy");
  auto other_domain = probe("torch", "cudaMemcpy");
  CallSummary s;
  s.add(exit_event(a, 100));
  s.add(exit_event(b, 300));
  s.add(exit_event(a, 200));
  s.add(exit_event(other_domain, 1));
  EXPECT_EQ(s.key_count(), 2u);
  const auto rows = s.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].domain, "cuda");
  EXPECT_EQ(rows[0].calls, 3u);
  EXPECT_EQ(rows[0].total_ns, 600u);
  EXPECT_EQ(rows[1].domain, "torch");
  const LatencySketch* sk = s.sketch("cuda", "cudaMemcpy");
  ASSERT_NE(sk, nullptr);
  EXPECT_EQ(sk->count(), 3u);
  EXPECT_EQ(s.sketch("cuda", "nothing"), nullptr);
}

TEST(CallSummary, KeyCapCountsOverflowedEvents) {
  CallSummary::Options opt;
  opt.max_keys = 2;
  auto created = CallSummary::create(opt);
  ASSERT_TRUE(created.ok()) << created.error();
  CallSummary s = std::move(created).value();
  auto f1 = probe("cuda", "f1"), f2 = probe("cuda", "f2"), f3 = probe("cuda", "f3"), f4 = probe("nccl", "f4");
  s.add(exit_event(f1, 1));
  s.add(exit_event(f2, 1));
  for (int i = 0; i < 5; ++i) s.add(exit_event(f3, 1));
  s.add(exit_event(f4, 1));
  s.add(exit_event(f1, 1));  // known keys still count after the cap is reached
  EXPECT_EQ(s.key_count(), 2u);
  EXPECT_EQ(s.overflow_events(), 6u);
  EXPECT_EQ(s.total_events(), 9u);
  std::uint64_t calls = 0;
  for (const auto& r : s.rows()) calls += r.calls;
  EXPECT_EQ(calls + s.overflow_events(), s.total_events());
}

TEST(CallSummary, EventWithoutProbeIsKeptUnderEmptyNames) {
  CallSummary s;
  CallEvent e;
  e.has_exit = true;
  e.dur_ns = 42;
  e.ret = 5;  // no probe: no return kind, so not an error
  s.add(e);
  const auto rows = s.rows();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].domain, "");
  EXPECT_EQ(rows[0].function, "");
  EXPECT_EQ(rows[0].errors, 0u);
  EXPECT_EQ(rows[0].total_ns, 42u);
}

TEST(CallSummary, SketchAccuracyFollowsOptions) {
  CallSummary::Options opt;
  opt.sketch.relative_accuracy = 0.05;
  auto s = CallSummary::create(opt);
  ASSERT_TRUE(s.ok());
  s->add(exit_event(probe("cuda", "f"), 10));
  EXPECT_DOUBLE_EQ(s->sketch("cuda", "f")->relative_accuracy(), 0.05);
}

TEST(CallSummary, CreateRejectsBadOptions) {
  CallSummary::Options no_keys;
  no_keys.max_keys = 0;
  EXPECT_FALSE(CallSummary::create(no_keys).ok());
  CallSummary::Options bad_alpha;
  bad_alpha.sketch.relative_accuracy = 2.0;
  const auto r = CallSummary::create(bad_alpha);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("relative accuracy"), std::string::npos) << r.error();
}

// frozen(): the rows and sketches a reader sees, in no more memory than the live summary.
TEST(CallSummary, FrozenCopyHasTheSameRowsInLessMemory) {
  auto malloc_probe = probe("cuda", "cudaMalloc");
  auto launch = probe("cuda", "cudaLaunchKernelWithALongName");
  CallSummary s;
  for (std::uint64_t d = 1'000; d < 4'000'000; d = d * 3 / 2) s.add(exit_event(malloc_probe, d));
  s.add(exit_event(malloc_probe, 50, 2));
  s.add(exit_event(launch, 7'000));
  const CallSummary f = s.frozen();
  const auto live = s.rows();
  const auto copy = f.rows();
  ASSERT_EQ(copy.size(), live.size());
  for (std::size_t i = 0; i < live.size(); ++i) {
    EXPECT_EQ(copy[i].function, live[i].function);
    EXPECT_EQ(copy[i].calls, live[i].calls);
    EXPECT_EQ(copy[i].errors, live[i].errors);
    EXPECT_EQ(copy[i].total_ns, live[i].total_ns);
    EXPECT_EQ(copy[i].p99_ns, live[i].p99_ns);
    EXPECT_EQ(copy[i].error_codes.size(), live[i].error_codes.size());
  }
  EXPECT_EQ(f.sketch("cuda", "cudaMalloc")->count(), s.sketch("cuda", "cudaMalloc")->count());
  EXPECT_EQ(f.total_events(), s.total_events());
  EXPECT_GT(f.heap_bytes(), 0u);
  EXPECT_LT(f.heap_bytes(), s.heap_bytes());

  // Adding to a frozen copy goes on where the summary was.
  CallSummary more = f;
  more.add(exit_event(launch, 9'000));
  EXPECT_EQ(more.sketch("cuda", "cudaLaunchKernelWithALongName")->count(), 2u);
  EXPECT_EQ(more.key_count(), 2u);
}

}  // namespace
}  // namespace eacgm::analysis
