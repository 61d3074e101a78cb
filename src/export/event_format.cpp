// Formats events by hand with fmt: a generic JSON library would dominate the cost
// of `trace -o` at millions of events per second.
#include "export/event_format.h"

#include <array>
#include <ctime>

#include "core/nccl_types.h"
#include "core/result_names.h"
#include "export/json_writer.h"

namespace eacgm::exporting {
namespace {
using Buf = fmt::memory_buffer;

std::int64_t as_signed(const ArgSpec& a, std::uint64_t v) {
  switch (a.kind) {
    case ArgKind::kU32:
    case ArgKind::kDerefU32:
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    case ArgKind::kU16:
      return static_cast<std::int16_t>(static_cast<std::uint16_t>(v));
    case ArgKind::kU8:
      return static_cast<std::int8_t>(static_cast<std::uint8_t>(v));
    default:
      return static_cast<std::int64_t>(v);
  }
}

// One argument's value; `json` selects JSON or text spelling.
void append_value(Buf& out, const CallEvent& e, std::size_t i, bool json) {
  const ArgSpec& a = e.probe->spec.args[i];
  std::uint64_t v = e.args[i];
  if (e.fault_mask & (1u << i)) {
    put(out, json ? "null" : "?");
    return;
  }
  switch (a.kind) {
    case ArgKind::kDim3:
    case ArgKind::kDerefDim3:
    case ArgKind::kDim3Split:
      out.push_back(json ? '[' : '(');
      put_uint(out, static_cast<std::uint32_t>(v));
      out.push_back(',');
      put_uint(out, static_cast<std::uint32_t>(v >> 32));
      out.push_back(',');
      put_uint(out, e.ext[i]);
      out.push_back(json ? ']' : ')');
      return;
    case ArgKind::kString: {
      // The spec's first string arg is in str, its second in str2.
      bool second = false;
      for (std::size_t j = 0; j < i; ++j) second = second || e.probe->spec.args[j].kind == ArgKind::kString;
      const std::string& s = second ? e.str2 : e.str;
      if (json) {
        append_json_string(out, s);
      } else {
        out.push_back('"');
        put(out, s);
        if (second ? e.str2_truncated : e.str_truncated) put(out, "...");
        out.push_back('"');
      }
      return;
    }
    default:
      break;
  }
  switch (a.format) {
    case ArgFormat::kHex:
      if (json) out.push_back('"');
      put_hex(out, v);
      if (json) out.push_back('"');
      break;
    case ArgFormat::kSigned:
      put_int(out, as_signed(a, v));
      break;
    case ArgFormat::kUnsigned:
      put_uint(out, v);
      break;
  }
}

// A derived value: a number, a string (names), or a hex-spelled id.
struct DerivedValue {
  enum class Kind : std::uint8_t { kNumber, kString, kHex };
  Kind kind = Kind::kNumber;
  std::uint64_t number = 0;
  std::string_view text;
};

DerivedValue number(std::uint64_t v) { return {DerivedValue::Kind::kNumber, v, {}}; }
DerivedValue text(std::string_view s) { return {DerivedValue::Kind::kString, 0, s}; }

// Derived values (`bytes`), written after the captured arguments; then the kernel name
// ingest found for a naming call (__cudaRegisterFunction, cuModuleGetFunction), whose
// spec derives none.
template <typename Emit>
void for_each_derived(const CallEvent& e, Emit emit) {
  bool kernel_named = e.kernel.empty();
  for (const auto& d : e.probe->spec.derived) {
    int from = arg_index(e.probe->spec, d.from);
    if (from < 0 || (e.fault_mask & (1u << from))) continue;
    const std::uint64_t v = e.args[static_cast<std::size_t>(from)];
    if (d.op == DerivedArg::Op::kCopy) {
      emit(d.name, number(v));
    } else if (d.op == DerivedArg::Op::kTimes2) {
      emit(d.name, number(v * 2));
    } else if (d.op == DerivedArg::Op::kTimes4) {
      emit(d.name, number(v * 4));
    } else if (d.op == DerivedArg::Op::kProduct) {
      int with = arg_index(e.probe->spec, d.with);
      if (with < 0 || (e.fault_mask & (1u << with))) continue;
      std::uint64_t product = v * e.args[static_cast<std::size_t>(with)] * d.scale;
      if (!d.with2.empty()) {
        int with2 = arg_index(e.probe->spec, d.with2);
        if (with2 < 0 || (e.fault_mask & (1u << with2))) continue;
        product *= e.args[static_cast<std::size_t>(with2)];
      }
      emit(d.name, number(product));
    } else if (d.op == DerivedArg::Op::kKernelName) {
      // Named by ingest (ingest/kernel_names.h); absent when the handle is unknown.
      kernel_named = true;
      if (!e.kernel.empty()) emit(d.name, text(e.kernel));
    } else if (d.op == DerivedArg::Op::kTimesNcclDtype) {
      int with = arg_index(e.probe->spec, d.with);
      if (with < 0 || (e.fault_mask & (1u << with))) continue;
      // An unknown datatype (a newer NCCL) gets no `bytes` rather than a wrong one.
      if (auto size = nccl_dtype_size(e.args[static_cast<std::size_t>(with)])) {
        emit(d.name, number(v * *size));
      }
    } else if (d.op == DerivedArg::Op::kNcclDtypeName) {
      if (auto name = nccl_dtype_name(v); !name.empty()) emit(d.name, text(name));
    } else if (d.op == DerivedArg::Op::kNcclRedOpName) {
      if (auto name = nccl_red_op_name(v); !name.empty()) emit(d.name, text(name));
    } else if (d.op == DerivedArg::Op::kCudaMemcpyKindName) {
      if (auto name = cuda_memcpy_kind_name(v); !name.empty()) emit(d.name, text(name));
    }
  }
  if (!kernel_named && arg_index(e.probe->spec, "kernel") < 0)
    emit(std::string_view("kernel"), text(e.kernel));
}

// The NCCL communicator of the call (ingest/nccl_comms.h), when known; a probe's own
// arg of the same name (ncclCommInitRank's `rank`) wins.
template <typename Emit>
void for_each_nccl_comm_field(const CallEvent& e, Emit emit) {
  if (e.nccl_rank < 0 && e.nccl_nranks < 0 && e.nccl_comm_id == 0) return;  // the common case
  const ProbeSpec& spec = e.probe->spec;
  if (e.nccl_rank >= 0 && arg_index(spec, "rank") < 0) {
    emit(std::string_view("rank"), number(static_cast<std::uint64_t>(e.nccl_rank)));
  }
  if (e.nccl_nranks >= 0 && arg_index(spec, "nranks") < 0) {
    emit(std::string_view("nranks"), number(static_cast<std::uint64_t>(e.nccl_nranks)));
  }
  if (e.nccl_comm_id != 0 && arg_index(spec, "comm_id") < 0) {
    emit(std::string_view("comm_id"), DerivedValue{DerivedValue::Kind::kHex, e.nccl_comm_id, {}});
  }
}

void append_derived_value(Buf& out, const DerivedValue& v, bool json) {
  switch (v.kind) {
    case DerivedValue::Kind::kNumber:
      put_uint(out, v.number);
      break;
    case DerivedValue::Kind::kString:
      if (json) {
        append_json_string(out, v.text);
      } else {
        put(out, v.text);
      }
      break;
    case DerivedValue::Kind::kHex:
      fmt::format_to(std::back_inserter(out), fmt::runtime(json ? "\"0x{:016x}\"" : "0x{:016x}"), v.number);
      break;
  }
}

// The name of a failed call's result code ("cudaErrorInsufficientDriver"), or "" for
// success, a code the domain's table lacks, or a return that is not a result code.
std::string_view error_name(const CallEvent& e) {
  if (e.probe->spec.ret != ReturnKind::kInt32 || !e.is_error()) return {};
  const auto code = static_cast<std::int32_t>(e.ret);
  if (code == 0) return {};
  return result_code_name(e.probe->spec.domain, code);
}

std::size_t arg_count(const CallEvent& e) {
  return std::min<std::size_t>(e.nargs, e.probe->spec.args.size());
}

struct GraphWorkCounts {
  std::uint64_t kernels = 0;
  std::uint64_t memsets = 0;
  std::uint64_t copies = 0;
};

GraphWorkCounts graph_work_counts(const GraphWork& g) {
  GraphWorkCounts c;
  for (const auto& item : g.items) {
    if (item.kind == GpuWork::kKernel) c.kernels += item.count;
    if (item.kind == GpuWork::kMemset) c.memsets += item.count;
    if (item.kind == GpuWork::kCopy) c.copies += item.count;
  }
  return c;
}

}  // namespace

void append_json_string(Buf& out, std::string_view s) { put_json_string(out, s); }

void append_json_result(Buf& out, const CallEvent& e) {
  switch (e.probe->spec.ret) {
    case ReturnKind::kInt32:
      put(out, "\"ret\":");
      put_int(out, static_cast<std::int32_t>(e.ret));
      if (auto name = error_name(e); !name.empty()) {
        put(out, ",\"ret_name\":");
        append_json_string(out, name);
      }
      break;
    case ReturnKind::kInt64:
      put(out, "\"ret\":");
      put_int(out, e.ret);
      break;
    case ReturnKind::kPointer:
      put(out, "\"ret\":\"");
      put_hex(out, static_cast<std::uint64_t>(e.ret));
      out.push_back('"');
      break;
    case ReturnKind::kNone:
      put(out, "\"ret\":null");
      break;
  }
}

void append_json_args(Buf& out, const CallEvent& e) {
  out.push_back('{');
  bool first = true;
  for (std::size_t i = 0; i < arg_count(e); ++i) {
    if (e.probe->spec.args[i].continues) continue;  // joined into the string it continues
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, e.probe->spec.args[i].name);
    out.push_back(':');
    append_value(out, e, i, true);
  }
  auto emit = [&](std::string_view name, const DerivedValue& v) {
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, name);
    out.push_back(':');
    append_derived_value(out, v, true);
  };
  for_each_derived(e, emit);
  for_each_nccl_comm_field(e, emit);
  out.push_back('}');
}

void append_json_markers(Buf& out, const CallEvent& e) {
  if (e.nested) put(out, ",\"nested\":true");  // only when set: see docs/events.md
  if (e.captured) put(out, ",\"captured\":true");
  if (e.graph) {
    const GraphWorkCounts c = graph_work_counts(*e.graph);
    const std::array<UintField, 4> fields{
        {{"nodes", e.graph->nodes}, {"kernels", c.kernels}, {"memsets", c.memsets}, {"copies", c.copies}}};
    put(out, ",\"graph\":");
    put_uint_object(out, fields);
  }
}

void append_jsonl(Buf& out, const CallEvent& e) {
  put(out, "{\"ts_ns\":");
  put_uint(out, e.ts_ns);
  put(out, ",\"pid\":");
  put_uint(out, e.pid);
  put(out, ",\"tid\":");
  put_uint(out, e.tid);
  put(out, ",\"comm\":");
  append_json_string(out, e.comm_view());
  put(out, ",\"domain\":");
  append_json_string(out, e.domain());
  put(out, ",\"name\":");
  append_json_string(out, e.function());
  if (e.has_exit) {
    put(out, ",\"dur_ns\":");
    put_uint(out, e.dur_ns);
    if (e.run_delay_ns > 0) {  // only where the thread waited for a CPU in the call
      put(out, ",\"run_delay_ns\":");
      put_uint(out, e.run_delay_ns);
    }
    out.push_back(',');
    append_json_result(out, e);
  } else {
    put(out, ",\"dur_ns\":null,\"ret\":null");
  }
  append_json_markers(out, e);
  put(out, ",\"args\":");
  append_json_args(out, e);
  put(out, "}\n");
}

void append_clock(Buf& out, std::uint64_t ts_ns) {
  std::time_t secs = static_cast<std::time_t>(ts_ns / 1000000000ull);
  std::tm tm{};
  localtime_r(&secs, &tm);
  fmt::format_to(std::back_inserter(out), "{:02}:{:02}:{:02}.{:06} ", tm.tm_hour, tm.tm_min, tm.tm_sec,
                 (ts_ns % 1000000000ull) / 1000);
}

void append_text(Buf& out, const CallEvent& e) {
  append_clock(out, e.ts_ns);
  fmt::format_to(std::back_inserter(out), "{}[{}/{}] {} {}(", e.comm_view(), e.pid, e.tid, e.domain(),
                 e.function());
  bool first = true;
  for (std::size_t i = 0; i < arg_count(e); ++i) {
    if (e.probe->spec.args[i].continues) continue;  // joined into the string it continues
    if (!first) put(out, ", ");
    first = false;
    put(out, e.probe->spec.args[i].name);
    out.push_back('=');
    append_value(out, e, i, false);
  }
  auto emit = [&](std::string_view name, const DerivedValue& v) {
    if (!first) put(out, ", ");
    first = false;
    put(out, name);
    out.push_back('=');
    append_derived_value(out, v, false);
  };
  for_each_derived(e, emit);  // the same derived values as JSON Lines (bytes, names...)
  for_each_nccl_comm_field(e, emit);
  out.push_back(')');
  if (e.nested) put(out, " [nested]");
  if (e.captured) put(out, " [captured]");
  if (e.graph) {
    const GraphWorkCounts c = graph_work_counts(*e.graph);
    fmt::format_to(std::back_inserter(out), " [graph: {} kernels, {} memsets, {} copies]", c.kernels,
                   c.memsets, c.copies);
  }
  if (e.has_exit) {
    if (e.probe->spec.ret == ReturnKind::kPointer) {
      fmt::format_to(std::back_inserter(out), " = {:#x}", static_cast<std::uint64_t>(e.ret));
    } else if (e.probe->spec.ret != ReturnKind::kNone) {
      fmt::format_to(std::back_inserter(out), " = {}",
                     e.probe->spec.ret == ReturnKind::kInt32 ? static_cast<std::int32_t>(e.ret) : e.ret);
      if (auto name = error_name(e); !name.empty()) fmt::format_to(std::back_inserter(out), " ({})", name);
    }
    double us = static_cast<double>(e.dur_ns) / 1000.0;
    if (us < 1000.0) {
      fmt::format_to(std::back_inserter(out), "  {:.2f} us", us);
    } else {
      fmt::format_to(std::back_inserter(out), "  {:.3f} ms", us / 1000.0);
    }
  }
  out.push_back('\n');
}

}  // namespace eacgm::exporting
