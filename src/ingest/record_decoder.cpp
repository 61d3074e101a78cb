// Record decoding: the hot path of ingest (millions of records per second).
#include "ingest/record_decoder.h"

#include <algorithm>
#include <cstring>

#include "core/record_abi.h"

namespace eacgm::ingest {

void join_continued_string(CallEvent& event) {
  bool first = false;
  for (const auto& a : event.probe->spec.args) {
    if (a.kind != ArgKind::kString) continue;
    if (!first) {
      first = true;
    } else if (a.continues) {
      event.str += event.str2;
      event.str_truncated = event.str2_truncated;
      event.str2.clear();
      event.str2_truncated = false;
    }
  }
}

RecordKind RecordDecoder::decode(const void* data, std::size_t size, CallEvent& event) {
  // A record ends after the last string area its probe uses (bpf/events.h).
  if (size != EACGM_REC_SIZE_FULL && size != EACGM_REC_SIZE_STR && size != EACGM_REC_SIZE_NO_STR) {
    ++counters_.malformed;
    return RecordKind::kMalformed;
  }
  eacgm_record r;
  std::memcpy(&r, data, size);
  if (size < EACGM_REC_SIZE_STR) r.str[0] = '\0';
  if (size < EACGM_REC_SIZE_FULL) r.str2[0] = '\0';
  event.ts_ns = clock_.from_monotonic(r.ts_ns);
  event.pid = r.pid;
  event.tid = r.tid;
  std::memcpy(event.comm.data(), r.comm, sizeof(r.comm));
  event.comm.back() = '\0';
  switch (r.type) {
    case EACGM_REC_CALL:
      break;
    case EACGM_REC_EXEC:
      ++counters_.hints;
      return RecordKind::kExecHint;
    case EACGM_REC_LIB_LOADED:
      ++counters_.hints;
      return RecordKind::kLibraryHint;
    default:
      ++counters_.malformed;
      return RecordKind::kMalformed;
  }
  const auto& probe = cache_.get(r.probe_id);
  if (!probe) {
    ++counters_.unknown_probe;
    return RecordKind::kUnknownProbe;
  }
  event.probe = probe;
  event.has_exit = (r.flags & EACGM_REC_HAS_EXIT) != 0;
  event.dur_ns = event.has_exit ? r.dur_ns : 0;
  event.run_delay_ns = event.has_exit && (r.flags & EACGM_REC_RUN_DELAY)
                           ? std::min<std::uint64_t>(r.run_delay_ns, r.dur_ns)
                           : 0;
  event.ret = event.has_exit ? r.ret : 0;
  event.fault_mask = r.fault_mask;
  event.nargs = r.nargs > kMaxArgs ? kMaxArgs : r.nargs;
  std::memcpy(event.args.data(), r.args, sizeof(r.args));
  std::memcpy(event.ext.data(), r.ext, sizeof(r.ext));
  event.str_truncated = (r.flags & EACGM_REC_STR_TRUNC) != 0;
  event.nested = (r.flags & EACGM_REC_NESTED) != 0;
  event.tallied = (r.flags & EACGM_REC_TALLIED) != 0;
  event.kernel.clear();  // named by ingest's kernel-name cache after decoding
  event.captured = false;
  if (event.graph) event.graph.reset();
  if (r.str[0] != '\0') {
    event.str.assign(r.str, ::strnlen(r.str, sizeof(r.str)));
  } else {
    event.str.clear();
  }
  event.str2_truncated = (r.flags & EACGM_REC_STR2_TRUNC) != 0;
  if (r.str2[0] != '\0') {
    event.str2.assign(r.str2, ::strnlen(r.str2, sizeof(r.str2)));
  } else {
    event.str2.clear();
  }
  // A name longer than the first string area continues in the second (ArgSpec::continues).
  if (event.str_truncated && !event.str2.empty()) join_continued_string(event);
  ++counters_.calls;
  return RecordKind::kCall;
}

}  // namespace eacgm::ingest
