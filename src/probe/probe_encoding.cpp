// A probe spec encoded as the kernel reads it (struct eacgm_probe in bpf/events.h): its
// captures, flags, count rule and the stack words its entry reads at once.
#include "probe/probe_encoding.h"

#include <algorithm>
#include <string_view>

#include "probe/always_on.h"

namespace eacgm::probe {

// Sources reach the kernel as their numbers.
static_assert(static_cast<int>(ArgSource::kRegister) == EACGM_SRC_REG);
static_assert(static_cast<int>(ArgSource::kStack) == EACGM_SRC_STACK);
static_assert(static_cast<int>(ArgSource::kPtReg) == EACGM_SRC_PTREG);
static_assert(static_cast<int>(ArgSource::kPtRegMem) == EACGM_SRC_PTREG_MEM);
static_assert(static_cast<int>(ArgSource::kArg) == EACGM_SRC_ARG);

namespace {

// An argument's position for struct eacgm_count, EACGM_COUNT_NONE when absent.
std::uint8_t count_arg(const ProbeSpec& spec, std::string_view name) {
  const int i = arg_index(spec, name);
  return i < 0 ? EACGM_COUNT_NONE : static_cast<std::uint8_t>(i);
}

// What a counted probe keeps of each call: the kernel handle of launches, the bytes of
// copies and memsets (from the same derived args the per-call path reports).
eacgm_count count_rule(const ProbeSpec& spec, std::uint8_t sample_shift) {
  eacgm_count c{};
  c.handle_arg = EACGM_COUNT_NONE;
  c.bytes_arg = EACGM_COUNT_NONE;
  c.bytes_arg2 = EACGM_COUNT_NONE;
  c.sample_shift = sample_shift;
  c.stream_arg = count_arg(spec, "stream");
  for (const DerivedArg& d : spec.derived) {
    if (d.op == DerivedArg::Op::kKernelName) c.handle_arg = count_arg(spec, d.from);
    if (d.name != "bytes") continue;
    switch (d.op) {
      case DerivedArg::Op::kCopy:
        c.bytes_arg = count_arg(spec, d.from);
        break;
      case DerivedArg::Op::kTimes2:
        c.bytes_arg = count_arg(spec, d.from);
        c.bytes_shift = 1;
        break;
      case DerivedArg::Op::kTimes4:
        c.bytes_arg = count_arg(spec, d.from);
        c.bytes_shift = 2;
        break;
      case DerivedArg::Op::kProduct:
        c.bytes_arg = count_arg(spec, d.from);
        c.bytes_arg2 = count_arg(spec, d.with);
        if (c.bytes_arg2 == EACGM_COUNT_NONE) c.bytes_arg = EACGM_COUNT_NONE;
        // The element size of a 2D memset counted in elements (2 or 4 bytes).
        if (d.scale == 2) c.bytes_shift = 1;
        if (d.scale == 4) c.bytes_shift = 2;
        break;
      default:
        break;
    }
  }
  return c;
}

// The stack argument words the entry of `p` reads, for eacgm_count.stack_words (the BPF
// side reads them in one read): arguments on the stack, the next word of a dim3 there,
// and the words of a split dim3 that run on from r9 onto the stack, as
// bpf/trace.bpf.c's load_word and resolve_arg take them. 0: none, or more than one read
// holds (each is then read alone).
std::uint8_t stack_words(const eacgm_probe& p) {
  unsigned lo = EACGM_STACK_WORDS, hi = 0;
  const auto use = [&](unsigned word) {
    lo = std::min(lo, word);
    hi = std::max(hi, word + 1);
  };
  const bool counted = (p.flags & EACGM_PROBE_COUNT) != 0;
  for (std::uint32_t i = 0; i < p.nargs && i < EACGM_MAX_ARGS; ++i) {
    if (counted && ((p.count.capture_mask >> i) & 1) == 0) continue;
    const eacgm_arg_spec& a = p.args[i];
    if (a.source == EACGM_SRC_STACK) use(a.index);
    if (a.kind == EACGM_KIND_DIM3 && a.source == EACGM_SRC_STACK) use(a.index + 1u);
    if (a.kind == EACGM_KIND_DIM3_SPLIT) {
      unsigned source = a.source, index = a.index;
      for (int k = 0; k < 2; ++k) {
        if (source == EACGM_SRC_REG && index >= 5) {
          source = EACGM_SRC_STACK;
          index = 0;
        } else {
          ++index;
        }
        if (source == EACGM_SRC_STACK) use(index);
      }
    }
  }
  if (hi == 0 || hi > EACGM_STACK_WORDS) return 0;
  return static_cast<std::uint8_t>(lo | (hi - lo) << 4);
}

}  // namespace

eacgm_probe encode_probe(const ProbeSpec& spec, bool counted, std::uint8_t sample_shift, bool cycled,
                         bool tally) {
  eacgm_probe p{};
  p.count = count_rule(spec, sample_shift);
  p.nargs = static_cast<std::uint32_t>(std::min(spec.args.size(), std::size_t{EACGM_MAX_ARGS}));
  if (counted) {
    // One trap per call: counted at entry, no record, so no strings or exit captures;
    // only the arguments up to the last one the count reads are captured.
    p.flags = EACGM_PROBE_ENABLED | EACGM_PROBE_COUNT |
              (spec.ret == ReturnKind::kInt32 && error_rule(spec) == ErrorRule::kNonZero ? EACGM_PROBE_RET_ERR
                                                                                         : 0) |
              (cycled ? EACGM_PROBE_CYCLED : 0);
    std::uint32_t needed = 0;
    for (std::uint8_t a : {p.count.handle_arg, p.count.bytes_arg, p.count.bytes_arg2, p.count.stream_arg}) {
      if (a == EACGM_COUNT_NONE || a >= p.nargs) continue;
      needed = std::max<std::uint32_t>(needed, a + 1u);
      // The argument, and the ones its pointer chain reads through.
      for (std::uint32_t i = a;; i = spec.args[i].index) {
        p.count.capture_mask |= static_cast<std::uint8_t>(1u << i);
        if (spec.args[i].source != ArgSource::kArg || spec.args[i].index >= i) break;
      }
    }
    // A call recorded while its process captures a stream (capture_entry in
    // bpf/trace.bpf.c reads every argument up to nargs) carries its event too: streams
    // join a capture through events (ingest/graph_capture.h). The count does not read it.
    if (const int event = arg_index(spec, "event"); event >= 0 && event < static_cast<int>(p.nargs)) {
      needed = std::max<std::uint32_t>(needed, static_cast<std::uint32_t>(event) + 1u);
    }
    p.nargs = std::min(p.nargs, needed);
  } else {
    // A split return is paired in user space: the kernel sends both halves as they come.
    const bool split = spec.with_exit && spec.split_return;
    p.flags = EACGM_PROBE_ENABLED | (spec.with_exit && !split ? EACGM_PROBE_EXIT : 0) |
              (split ? EACGM_PROBE_SPLIT : 0) | (spec.outer ? EACGM_PROBE_OUTER : 0) |
              (tally && !split ? EACGM_PROBE_TALLY : 0);
    // The kernel opens a capture at the begin's entry and closes it at the end's return,
    // so it needs both halves of the call.
    if ((p.flags & EACGM_PROBE_EXIT) != 0) {
      const CaptureBoundary boundary = capture_boundary(spec.name);
      if (boundary == CaptureBoundary::kBegin) p.flags |= EACGM_PROBE_CAPTURE_BEGIN;
      if (boundary == CaptureBoundary::kEnd) p.flags |= EACGM_PROBE_CAPTURE_END;
    }
  }
  // Only a return can clear the thread's mark.
  if (waits_in_calls(spec) && (counted || (p.flags & EACGM_PROBE_EXIT) != 0)) p.flags |= EACGM_PROBE_WAIT;
  std::size_t strings = 0;
  for (std::uint32_t i = 0; i < p.nargs; ++i) {
    const ArgSpec& a = spec.args[i];
    p.args[i].source = static_cast<std::uint8_t>(a.source);
    p.args[i].index = a.index;
    p.args[i].kind = static_cast<std::uint8_t>(a.kind);
    p.args[i].deref_offset = a.offset;
    p.args[i].disp = static_cast<std::int16_t>(a.displacement);
    if (counted) continue;
    p.args[i].flags = a.at_exit ? EACGM_ARG_AT_EXIT : 0;
    if (a.at_exit) p.flags |= EACGM_PROBE_EXIT_ARGS;
    // The second string of a spec goes to the record's str2.
    if (a.kind == ArgKind::kString) {
      const bool second = strings++ > 0;
      if (second) p.args[i].flags |= EACGM_ARG_STR2;
      p.flags |= second ? EACGM_PROBE_STR2 : EACGM_PROBE_STR;
    }
  }
  p.count.stack_words = stack_words(p);
  return p;
}

}  // namespace eacgm::probe
