// Pins the kernel/user record layout (bpf/events.h) so a change on either side
// fails to compile instead of silently misreading records.
#pragma once

#include <cstddef>

#include "bpf/events.h"

// The version both sides were built for; bump it (bpf/events.h) with any change here.
static_assert(EACGM_ABI_VERSION == 18);
static_assert(sizeof(eacgm_arg_spec) == 8);
static_assert(offsetof(eacgm_arg_spec, deref_offset) == 4);
static_assert(offsetof(eacgm_arg_spec, disp) == 6);
static_assert(sizeof(eacgm_probe) == 80);
static_assert(offsetof(eacgm_probe, count) == 72);
static_assert(sizeof(eacgm_count) == 8);
static_assert(offsetof(eacgm_count, stack_words) == 7);
static_assert(sizeof(eacgm_count_key) == 24);
static_assert(sizeof(eacgm_count_value) == 64);
static_assert(sizeof(eacgm_duration_key) == 16);
static_assert(sizeof(eacgm_duration_value) == 40);
static_assert(offsetof(eacgm_probe, args) == 8);
static_assert(sizeof(eacgm_record) == 352);
static_assert(offsetof(eacgm_record, ts_ns) == 0);
static_assert(offsetof(eacgm_record, dur_ns) == 8);
static_assert(offsetof(eacgm_record, pid) == 16);
static_assert(offsetof(eacgm_record, tid) == 20);
static_assert(offsetof(eacgm_record, probe_id) == 24);
static_assert(offsetof(eacgm_record, type) == 28);
static_assert(offsetof(eacgm_record, flags) == 30);
static_assert(offsetof(eacgm_record, ret) == 32);
static_assert(offsetof(eacgm_record, fault_mask) == 40);
static_assert(offsetof(eacgm_record, run_delay_ns) == 44);
static_assert(offsetof(eacgm_record, comm) == 48);
static_assert(offsetof(eacgm_record, args) == 64);
static_assert(offsetof(eacgm_record, ext) == 128);
static_assert(offsetof(eacgm_record, str) == 160);
static_assert(offsetof(eacgm_record, str2) == 224);
static_assert(EACGM_REC_SIZE_NO_STR == offsetof(eacgm_record, str));
static_assert(EACGM_REC_SIZE_STR == offsetof(eacgm_record, str2));
static_assert(EACGM_REC_SIZE_FULL == sizeof(eacgm_record));
// Capture sources and probe flags both sides interpret (src/probe/probe_encoding.cpp maps
// ArgSource onto the sources).
static_assert(EACGM_SRC_ARG == 6);
static_assert(EACGM_PROBE_ENABLED == 0x2);  // muting clears it in place (BpfTracer::set_probe_enabled)
static_assert(EACGM_MAX_PROBES == 65536);   // probe ids, and entries of `probes` and `probe_hits`
static_assert(EACGM_PROBE_SPLIT == 0x40);
static_assert(EACGM_PROBE_COUNT == 0x80 && EACGM_PROBE_RET_ERR == 0x100 && EACGM_PROBE_WAIT == 0x200 &&
              EACGM_PROBE_CYCLED == 0x400);
static_assert(EACGM_PROBE_CAPTURE_BEGIN == 0x800 && EACGM_PROBE_CAPTURE_END == 0x1000 &&
              EACGM_PROBE_TALLY == 0x2000);
static_assert(EACGM_REC_TALLIED == 0x20);
static_assert(sizeof(eacgm_call_in_flight) == 112);  // shared with bpf/py_sample.bpf.c
static_assert(offsetof(eacgm_call_in_flight, sp) == 8);
static_assert(offsetof(eacgm_call_in_flight, pid) == 16);
static_assert(offsetof(eacgm_call_in_flight, nargs) == 28);
static_assert(offsetof(eacgm_call_in_flight, comm) == 32);
static_assert(offsetof(eacgm_call_in_flight, args) == 48);
static_assert((EACGM_PROBE_SPLIT & (EACGM_PROBE_EXIT | EACGM_PROBE_ENABLED | EACGM_PROBE_OUTER |
                                    EACGM_PROBE_STR | EACGM_PROBE_STR2 | EACGM_PROBE_EXIT_ARGS)) == 0);
