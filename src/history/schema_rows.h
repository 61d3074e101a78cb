// Records and rows, table by table: which field of a batch's record (or of what a query
// reads back) each column holds, in the columns' order (schema.h), and which rows of a
// batch fill each table. A mapping is a list of fields, walked one way to write a row
// (SQLite's bindings, PostgreSQL's COPY and parameters) and the other to read one back;
// the stores supply the two ends:
//   Out: integer(int64_t), real(double), text(string_view), sketch(const StoredSketch&),
//        name(the name: the store finds or makes its id), null();
//   In:  is_null(col), i64(col), f64(col), text(col), blob(col).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "history/function_sums.h"
#include "history/history_batch.h"
#include "history/history_query.h"
#include "history/interval_totals.h"
#include "history/schema.h"

namespace eacgm::history {

// A column holding an id into `names`: written from the name (or from an id found before),
// read back as the name (the query looks it up: schema_sql.h's read_columns, name_by_id).
template <class T>
struct NameOf {
  T& value;
};
template <class T>
NameOf<T> name_of(T& v) {
  return {v};
}

// Where the rows of one write or rollup go: the tier, the node's id, the interval.
struct RowPlace {
  int tier = 0;
  std::int64_t node = 0;
  std::int64_t t_ns = 0;
  std::int64_t span_ns = 0;
};

namespace rows_detail {
template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <class T>
struct IsName : std::false_type {};
template <class T>
struct IsName<NameOf<T>> : std::true_type {};
}  // namespace rows_detail

template <class Out, class T>
void put(Out& out, const T& v) {
  if constexpr (rows_detail::IsOptional<T>::value) {
    if (v) {
      put(out, *v);
    } else {
      out.null();
    }
  } else if constexpr (rows_detail::IsName<T>::value) {
    if constexpr (std::is_integral_v<std::remove_cv_t<std::remove_reference_t<decltype(v.value)>>>) {
      out.integer(static_cast<std::int64_t>(v.value));  // an id already found
    } else {
      out.name(v.value);
    }
  } else if constexpr (std::is_same_v<T, bool>) {
    out.integer(v ? 1 : 0);
  } else if constexpr (std::is_integral_v<T>) {
    out.integer(static_cast<std::int64_t>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    out.real(static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, StoredSketch>) {
    out.sketch(v);
  } else {
    out.text(v);
  }
}

template <class In, class T>
void get(const In& in, int col, T& v) {
  if constexpr (rows_detail::IsOptional<T>::value) {
    if (in.is_null(col)) {
      v.reset();
    } else {
      typename T::value_type x{};
      get(in, col, x);
      v = x;
    }
  } else if constexpr (rows_detail::IsName<T>::value) {
    v.value = in.text(col);
  } else if constexpr (std::is_same_v<T, bool>) {
    v = in.i64(col) != 0;
  } else if constexpr (std::is_integral_v<T>) {
    v = static_cast<T>(in.i64(col));
  } else if constexpr (std::is_floating_point_v<T>) {
    v = static_cast<T>(in.f64(col));
  } else if constexpr (std::is_same_v<T, StoredSketch>) {
    // A damaged sketch loses the row's latency, never its counts.
    v = {};
    if (!in.is_null(col)) {
      if (auto s = decode(in.blob(col))) v = std::move(s).value();
    }
  } else {
    v = in.text(col);
  }
}

// The two ends as a field visitor: each call writes (reads) the next column.
template <class Out>
struct RowWriter {
  Out& out;
  template <class T>
  void operator()(const T& v) {
    put(out, v);
  }
};
template <class In>
struct RowReader {
  explicit RowReader(const In& i, int first = 0) : in(i), col(first) {}
  const In& in;
  int col;
  template <class T>
  void operator()(T&& v) {
    get(in, col++, v);
  }
};

// Each field in turn.
template <class V, class... F>
void fields(V& v, F&&... f) {
  (v(std::forward<F>(f)), ...);
}

// ---- The fields of each table, past the columns its place fills (tier, node, t_ns,
// span_ns of an interval table; node of the others). `R` is the record, const or not.

// processes: (node,) pid ... job_step.
template <class R, class V>
void process_fields(R& p, V&& v) {
  fields(v, p.key.pid, p.key.start_ns, p.comm, p.cmdline, p.rank, p.local_rank, p.world_size, p.container,
         p.pod, p.first_ns, p.last_ns, p.exited, p.pod_uid, p.namespace_, p.container_name, p.job,
         p.job_step);
}

// functions: the sums of a key (FunctionRecord, FunctionSums and StoredFunction alike).
template <class R, class V>
void function_sums(R& f, V&& v) {
  fields(v, f.calls, f.errors, f.bytes, f.timed, f.estimated, f.calls_variance, f.latency);
}

// kernels: (KernelRecord, StoredKernel, or an id and its launches).
template <class R, class V>
void kernel_fields(R& k, V&& v) {
  fields(v, name_of(k.kernel), k.launches);
}

// gpus: what a GPU measured (GpuRecord and StoredGpuPoint alike), after `samples`.
template <class R, class V>
void gpu_measures(R& g, V&& v) {
  fields(v, g.util_mean, g.util_max, g.memory_used_mean, g.memory_used_max, g.memory_total, g.power_mean_w,
         g.power_max_w, g.temperature_max, g.sm_active_mean, g.sm_active_max, g.tensor_active_mean,
         g.tensor_active_max, g.dram_active_mean, g.dram_active_max, g.energy_mj, g.energy_counter_ns);
}

// anomalies: (node,) t_ns ... median_ns.
template <class R, class V>
void anomaly_fields(R& a, V&& v) {
  fields(v, a.t_ns, a.end_ns, a.process.pid, a.process.start_ns, a.kind, name_of(a.domain),
         name_of(a.function), a.score, a.value, a.median_ns);
}

// leaks: (node, t_ns,) pid ... bytes.
template <class R, class V>
void leak_fields(R& l, V&& v) {
  fields(v, l.process.pid, l.process.start_ns, l.device, l.allocations, l.bytes);
}

// ---- Writing: one row of each table from what a batch holds.

template <class V>
void put_place(V& w, const RowPlace& at) {
  fields(w, at.tier, at.node, at.t_ns, at.span_ns);
}

// intervals: the batch's own row.
template <class Out>
void put_row(Out& out, const RowPlace& at, const IntervalBatch& b) {
  RowWriter<Out> w{out};
  fields(w, at.node, at.t_ns, at.span_ns, b.mode);
}
template <class Out>
void put_row(Out& out, const RowPlace& at, const ProcessRecord& p) {
  RowWriter<Out> w{out};
  w(at.node);
  process_fields(p, w);
}
// functions: a record, or a key whose names are ids with its sums.
template <class Out, class Name, class Sums>
void put_function(Out& out, const RowPlace& at, std::int64_t pid, std::int64_t start_ns, const Name& domain,
                  const Name& function, const Sums& sums) {
  RowWriter<Out> w{out};
  put_place(w, at);
  fields(w, pid, start_ns, name_of(domain), name_of(function));
  function_sums(sums, w);
}
template <class Out>
void put_row(Out& out, const RowPlace& at, const FunctionRecord& f) {
  put_function(out, at, f.process.pid, f.process.start_ns, f.domain, f.function, f);
}
template <class Out>
void put_row(Out& out, const RowPlace& at, const FunctionKey& key, const FunctionSums& sums) {
  put_function(out, at, key.pid, key.start_ns, key.domain, key.function, sums);
}
template <class Out, class Kernel>
void put_kernel(Out& out, const RowPlace& at, const Kernel& k) {
  RowWriter<Out> w{out};
  put_place(w, at);
  kernel_fields(k, w);
}
template <class Out>
void put_row(Out& out, const RowPlace& at, const KernelRecord& k) {
  put_kernel(out, at, k);
}
template <class Out>
void put_row(Out& out, const RowPlace& at, const GpuRecord& g) {
  RowWriter<Out> w{out};
  put_place(w, at);
  fields(w, g.index, name_of(g.uuid), name_of(g.name), g.samples);
  gpu_measures(g, w);
}
template <class Out>
void put_row(Out& out, const RowPlace& at, const GpuProcessRecord& g) {
  RowWriter<Out> w{out};
  put_place(w, at);
  fields(w, g.gpu, g.process.pid, g.process.start_ns, g.samples, g.memory_max, g.sm_mean, g.idle_samples,
         g.power_sum_w, g.power_share_w);
}
template <class Out>
void put_row(Out& out, const RowPlace& at, const AnomalyRecord& a) {
  RowWriter<Out> w{out};
  w(at.node);
  anomaly_fields(a, w);
}
// A leak is found at the end of the interval that saw its process exit.
template <class Out>
void put_row(Out& out, const RowPlace& at, const LeakRecord& l) {
  RowWriter<Out> w{out};
  fields(w, at.node, at.t_ns + at.span_ns);
  leak_fields(l, w);
}

// process_totals and function_totals (interval_totals.h).
template <class Out>
void put_row(Out& out, const RowPlace& at, const ProcessTotalRecord& p) {
  RowWriter<Out> w{out};
  put_place(w, at);
  fields(w, p.process.pid, p.process.start_ns, p.calls, p.errors);
}
template <class Out, class Name>
void put_row(Out& out, const RowPlace& at, const FunctionTotalRecord<Name>& f) {
  RowWriter<Out> w{out};
  put_place(w, at);
  fields(w, name_of(f.domain), name_of(f.function));
  function_sums(f.sums, w);
}

// Each table a batch fills and its rows, in the order a store writes them (intervals
// first, on their own: a store may dedupe on it).
template <class Fn>
void for_each_table(const IntervalBatch& b, Fn&& fn) {
  fn(tables::kProcesses, b.processes);
  fn(tables::kFunctions, b.functions);
  fn(tables::kKernels, b.kernels);
  fn(tables::kGpus, b.gpus);
  fn(tables::kGpuProcesses, b.gpu_processes);
  fn(tables::kAnomalies, b.anomalies);
  fn(tables::kLeaks, b.leaks);
}
// The tables of a batch's totals, after the batch's own.
template <class Name, class Fn>
void for_each_table(const IntervalTotals<Name>& t, Fn&& fn) {
  fn(tables::kProcessTotals, t.processes);
  fn(tables::kFunctionTotals, t.functions);
}

// ---- Reading: a row of read_columns (schema_sql.h) of processes, anomalies and leaks
// from column `col` on; each returns the column after it.

template <class V>
void stored_fields(StoredProcess& p, V& r) {
  r(p.node);
  process_fields(p.record, r);
}
template <class V>
void stored_fields(StoredAnomaly& a, V& r) {
  r(a.node);
  anomaly_fields(a.record, r);
}
template <class V>
void stored_fields(StoredLeak& l, V& r) {
  fields(r, l.node, l.t_ns);
  leak_fields(l.record, r);
}
template <class In, class Stored>
int get_row(const In& in, int col, Stored& row) {
  RowReader<In> r(in, col);
  stored_fields(row, r);
  return r.col;
}

// A GPU's point: node, step start, then the columns of gpus from `gpu` on (as
// gpu_points_sql selects them), the sample count left out.
template <class In>
StoredGpuPoint get_gpu_point(const In& in) {
  StoredGpuPoint p;
  std::uint64_t samples = 0;
  RowReader<In> r(in);
  fields(r, p.node, p.t_ns, p.gpu, p.uuid, p.name, samples);
  gpu_measures(p, r);
  return p;
}

}  // namespace eacgm::history
