// libFuzzer target: arbitrary bytes as one ring-buffer record (bpf/events.h). The decoder
// must reject wrong sizes and types, never read past the record, and leave a CallEvent
// within its bounds; counters must add up to the records seen.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "core/record_abi.h"
#include "fuzz_probes.h"
#include "ingest/record_decoder.h"

namespace {

struct Harness {
  eacgm::probe::ProbeTable table;
  eacgm::ingest::RecordDecoder decoder{table};
  std::uint64_t records = 0;
  Harness() { eacgm::fuzz::add_fuzz_probes(table); }
};

void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Harness h;  // one decoder for the whole run, as ingest keeps one per reader
  using eacgm::ingest::RecordKind;
  // Heap copy of exactly `size` bytes: AddressSanitizer catches any read past it.
  auto* copy = static_cast<std::uint8_t*>(std::malloc(size == 0 ? 1 : size));
  for (std::size_t i = 0; i < size; ++i) copy[i] = data[i];
  eacgm::CallEvent e;
  const RecordKind kind = h.decoder.decode(copy, size, e);
  std::free(copy);
  ++h.records;

  const bool valid_size =
      size == EACGM_REC_SIZE_NO_STR || size == EACGM_REC_SIZE_STR || size == EACGM_REC_SIZE_FULL;
  if (!valid_size) require(kind == RecordKind::kMalformed);
  if (kind == RecordKind::kCall) {
    require(e.probe != nullptr);
    require(e.nargs <= eacgm::kMaxArgs);
    // A string area without its NUL (never sent by the BPF side) is read to its end, no further.
    require(e.str.size() <= EACGM_STR_LEN && e.str2.size() <= EACGM_STR2_LEN);
    if (size < EACGM_REC_SIZE_STR) require(e.str.empty());
    if (size < EACGM_REC_SIZE_FULL) require(e.str2.empty());
    if (!e.has_exit) require(e.dur_ns == 0 && e.ret == 0);
    require(e.comm_view().size() < e.comm.size());
    volatile bool sink = e.is_error() && !e.function().empty() && !e.domain().empty();
    (void)sink;
  }
  const auto& c = h.decoder.counters();
  require(c.calls + c.hints + c.malformed + c.unknown_probe == h.records);
  return 0;
}
