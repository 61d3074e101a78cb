/* The kernel/user boundary: probe specs the agent writes into BPF maps and the
 * fixed-size records the BPF programs emit. Fixed-width types only; the C++ side
 * pins sizes and offsets with static_asserts (src/core/record_abi.h). */
#ifndef EACGM_BPF_EVENTS_H
#define EACGM_BPF_EVENTS_H

#ifdef __cplusplus
#include <cstdint>
typedef std::uint8_t eacgm_u8;
typedef std::uint16_t eacgm_u16;
typedef std::uint32_t eacgm_u32;
typedef std::uint64_t eacgm_u64;
typedef std::int64_t eacgm_s64;
typedef std::int16_t eacgm_s16;
#else
typedef __u8 eacgm_u8;
typedef __u16 eacgm_u16;
typedef __u32 eacgm_u32;
typedef __u64 eacgm_u64;
typedef __s64 eacgm_s64;
typedef __s16 eacgm_s16;
#endif

#define EACGM_MAX_ARGS 8
#define EACGM_STACK_WORDS 8 /* stack argument words an entry may read at once */
#define EACGM_STR_LEN 64
#define EACGM_STR2_LEN 128 /* the second string: long enough for most source file paths */
#define EACGM_COMM_LEN 16
#define EACGM_MAX_PROBES 65536
#define EACGM_MAX_INFLIGHT 8 /* open traced calls per thread (power of two) */
/* Version of this boundary (records, probe entries, maps the agent reads): the BPF
 * object carries it as `abi_version` and the agent checks it at load. Bumped with
 * every change either side must agree on. 4: per-probe hit counts (`probe_hits`).
 * 5: EACGM_CNT_EXITS_BEFORE_ATTACH; target_pids values are EACGM_TARGET_* flags.
 * 6: counted probes (EACGM_PROBE_COUNT, struct eacgm_count, `call_counts`, `call_durations`).
 * 7: EACGM_PROBE_WAIT and the `waiting_calls` map (struct eacgm_waiting_call).
 * 8: cycled probes (EACGM_PROBE_CYCLED, `duty_window`, `process_exits`,
 * eacgm_count_value.windowed).
 * 9: the duty window's switching state (EACGM_DUTY_*, eacgm_count_value.switching,
 * EACGM_CNT_SWITCH_TRAPS); eacgm_count.capture_mask.
 * 10: the pace's gaps (eacgm_count_value.in_gap_ns ... out_gaps, `pace_marks`).
 * 11: eacgm_count.stack_words: a probe's stack arguments read in one read.
 * 12: the `calls_in_flight` map (struct eacgm_call_in_flight) in place of `waiting_calls`,
 * EACGM_CNT_IN_FLIGHT_FULL.
 * 13: the `capture_pids` map: counted probes record each call of those processes
 *     (EACGM_CAPTURE_COOKIE).
 * 14: EACGM_PROBE_CAPTURE_BEGIN/END and the `capturing` map: counted probes record each
 *     call of a process while one of its CUDA stream captures is open.
 * 15: per-call probes counted at entry too (EACGM_PROBE_TALLY, EACGM_REC_TALLIED).
 * 16: eacgm_record.run_delay_ns and EACGM_REC_RUN_DELAY.
 * 17: eacgm_duration_value.held, held_sum_ns, held_delay_ns (errors 32 bits).
 * 18: the `call_counts_spill` map and EACGM_CNT_COUNT_SPILLED. */
#define EACGM_ABI_VERSION 18

/* The session cookie of a counted probe's call recorded per call for a capture: its
 * return closes the record (no sampled duration is ever this large). */
#define EACGM_CAPTURE_COOKIE (~0ULL)
/* Processes captured at once (src/agent/capture_recorder.h). */
#define EACGM_MAX_CAPTURES 64
/* Processes that have opened a CUDA stream capture (`capturing`; an entry lasts until
 * the process exits): past them, a process's work during a capture is counted, not
 * recorded into its graph. */
#define EACGM_MAX_CAPTURING 4096

/* Values of `duty_window` [0]: the cycled probes are detached, attached and counting, or
 * being attached or detached (the kernel installs or removes them one by one; their
 * traps then cost the process as much as while counting, for up to hundreds of ms). */
#define EACGM_DUTY_OFF 0
#define EACGM_DUTY_OPEN 1
#define EACGM_DUTY_SWITCHING 2
/* `duty_window` [1]: how many times the window has moved (the agent raises it with each
 * move), so that two calls in the same state are known to be in the same stretch. */

/* Values of the target_pids map (the pid filter): a traced process, and whether it may
 * be stopped at loader hints. Children inherit their parent's value. */
#define EACGM_TARGET_TRACED 0x1
#define EACGM_TARGET_NO_STOP 0x2 /* never stopped (a terminal's foreground job, ptraced) */

/* Where an argument lives at function entry (x86-64 System V). */
enum eacgm_arg_source {
	EACGM_SRC_NONE = 0,
	EACGM_SRC_REG = 1,   /* index 0..5: rdi rsi rdx rcx r8 r9 */
	EACGM_SRC_STACK = 2, /* index n: the n-th 8-byte stack argument */
	/* USDT operands sit in any register or in memory next to one ("8@%rbx",
	 * "-4@-20(%rbp)"): index is an enum eacgm_reg slot, disp the displacement. */
	EACGM_SRC_PTREG = 3,     /* the register's value */
	EACGM_SRC_PTREG_MEM = 4, /* the 8 bytes at register + disp */
	/* 5 is left unused: user space's "USDT operand" placeholder, resolved before load. */
	/* Pointer chains: index names an earlier argument of the same probe, whose captured
	 * value (args[index]: the word, or what a deref kind read) is this argument's word.
	 * A fault of that argument is a fault of this one. E.g. a field of a struct reached
	 * through two pointers: arg 0 = deref_u64 of a register at +a, arg 1 = deref_u64 of
	 * SRC_ARG 0 at +b, arg 2 = string of SRC_ARG 1 at +c. Read at entry only. */
	EACGM_SRC_ARG = 6,
};

/* Register slots of EACGM_SRC_PTREG(_MEM). The six argument registers come first in
 * System V order, so EACGM_SRC_REG index n and slot n name the same register. */
enum eacgm_reg {
	EACGM_REG_RDI = 0, EACGM_REG_RSI = 1, EACGM_REG_RDX = 2, EACGM_REG_RCX = 3,
	EACGM_REG_R8 = 4, EACGM_REG_R9 = 5, EACGM_REG_RAX = 6, EACGM_REG_RBX = 7,
	EACGM_REG_RBP = 8, EACGM_REG_RSP = 9, EACGM_REG_R10 = 10, EACGM_REG_R11 = 11,
	EACGM_REG_R12 = 12, EACGM_REG_R13 = 13, EACGM_REG_R14 = 14, EACGM_REG_R15 = 15,
	EACGM_REG_COUNT = 16,
};

/* What to make of the captured word. */
enum eacgm_arg_kind {
	EACGM_KIND_RAW = 0,       /* the 64-bit word itself */
	EACGM_KIND_U32 = 1,       /* low 32 bits */
	EACGM_KIND_DEREF_U32 = 2, /* *(u32 *)word */
	EACGM_KIND_DEREF_U64 = 3, /* *(u64 *)word */
	EACGM_KIND_DIM3 = 4,      /* by value: x,y in this register, z in the next */
	EACGM_KIND_DEREF_DIM3 = 5,/* *(dim3 *)word */
	EACGM_KIND_STRING = 6,    /* NUL-terminated string at word (str, or str2 with EACGM_ARG_STR2) */
	EACGM_KIND_DIM3_SPLIT = 7,/* x, y, z as three consecutive u32 arguments: this slot
				   * and the next two (past r9 they continue on the stack) */
	EACGM_KIND_U8 = 8,        /* low 8 bits (1-byte USDT operands such as %al) */
	EACGM_KIND_U16 = 9,       /* low 16 bits */
};

/* Capture flags of an argument. */
#define EACGM_ARG_AT_EXIT 0x1 /* dereference at function exit (out-parameters) */
#define EACGM_ARG_STR2 0x2    /* a string kind written to str2 instead of str */

struct eacgm_arg_spec {
	eacgm_u8 source;
	eacgm_u8 index;
	eacgm_u8 kind;
	eacgm_u8 flags;
	/* Deref kinds read at word + deref_offset: fields of a struct passed by pointer
	 * (cudaLaunchConfig_t, CUlaunchConfig). */
	eacgm_u16 deref_offset;
	eacgm_s16 disp; /* EACGM_SRC_PTREG_MEM: signed displacement from the register */
};

/* Probe flags. */
#define EACGM_PROBE_EXIT 0x1     /* paired entry+exit: duration and return value */
#define EACGM_PROBE_ENABLED 0x2  /* cleared to mute a probe without detaching */
#define EACGM_PROBE_OUTER 0x4    /* calls of other probes made on the same thread while this
				  * one runs are flagged EACGM_REC_NESTED (runtime -> driver) */
#define EACGM_PROBE_STR 0x8      /* some capture writes str: its records carry str */
#define EACGM_PROBE_STR2 0x10    /* some capture writes str2: its records carry str and str2 */
#define EACGM_PROBE_EXIT_ARGS 0x20 /* some capture is read at exit (EACGM_ARG_AT_EXIT) */
#define EACGM_PROBE_SPLIT 0x40   /* entry and return as two records, paired in user space (no
				  * per-thread depth limit; used without EACGM_PROBE_EXIT): the
				  * entry record is sent at once, like an entry-only probe's; the
				  * return record has EACGM_REC_HAS_EXIT, ts_ns = the return time,
				  * dur_ns = 0, ret, nargs = 1 and args[0] = the stack pointer after
				  * the return (the entry's rsp + 8, to match it with its entry) */
#define EACGM_PROBE_COUNT 0x80   /* always-on: counted at entry in `call_counts`, no record;
				  * the return is asked for only for sampled calls (a session
				  * link), whose durations go into `call_durations` */
#define EACGM_PROBE_RET_ERR 0x100 /* counted probes: a non-zero 32-bit return is an error */
#define EACGM_PROBE_WAIT 0x200   /* a call its thread may stay in (a synchronization, a blocking
				  * copy, NCCL, a user probe with waits = true): while it runs,
				  * `calls_in_flight` names it for the thread, the agent lists it
				  * and sampled Python stacks end in it. With EXIT, or with COUNT
				  * (the return is then asked for at every call) */
#define EACGM_PROBE_CYCLED 0x400 /* counted probes the budget's duty cycle detaches part of the
				  * time: they count only while `duty_window` is open */
#define EACGM_PROBE_CAPTURE_BEGIN 0x800 /* per-call probes with EXIT: a CUDA stream capture
				  * opens at the call's entry (and closes again at its return
				  * when it failed); while a process has one open, its counted
				  * probes' calls are recorded per call, as for `capture_pids`,
				  * so the work recorded into the graph is seen call by call */
#define EACGM_PROBE_CAPTURE_END 0x1000 /* per-call probes with EXIT: a stream capture closes
				  * at the call's return */
#define EACGM_PROBE_TALLY 0x2000 /* per-call probes in always-on mode: each call that is not
				  * nested is also counted at entry in `call_counts` (by process
				  * and probe; handle, stream and bytes 0), so its count does not
				  * depend on its record surviving the ring buffer; its record is
				  * flagged EACGM_REC_TALLIED (a call the map had no room for is
				  * not, and counts by its record) */

#define EACGM_COUNT_NONE 0xff /* struct eacgm_count: no such argument */

/* What a counted probe (EACGM_PROBE_COUNT) keeps of each call: the calls are counted
 * per (process, probe, handle), with the bytes they move; arguments are captured as
 * for a record, then reduced to these. */
struct eacgm_count {
	eacgm_u8 handle_arg; /* argument whose value splits the counts (a launch's CUfunction) */
	eacgm_u8 bytes_arg;  /* argument holding the bytes (or an element count) */
	eacgm_u8 bytes_arg2; /* a second factor (pitch x height); EACGM_COUNT_NONE: none */
	eacgm_u8 bytes_shift;/* bytes = value << shift (elements of 2 or 4 bytes) */
	eacgm_u8 sample_shift; /* time one call in 2^shift per CPU (0: every call) */
	eacgm_u8 stream_arg; /* argument holding the stream (counts are per stream too) */
	eacgm_u8 capture_mask; /* bit i: argument i is read at entry (those above, and the
				* ones their pointer chains start from); no others */
	eacgm_u8 stack_words; /* the stack argument words the entry reads, read at once
			       * (one wider user read costs less than several): the first
			       * in the low nibble, how many in the high one; 0: each alone */
};

/* One attached probe (a spec resolved to one symbol); indexed by the attach cookie. */
struct eacgm_probe {
	eacgm_u32 flags;
	eacgm_u32 nargs;
	struct eacgm_arg_spec args[EACGM_MAX_ARGS];
	struct eacgm_count count;
};

/* Always-on counts: cumulative per (process, probe, handle) while the process lives; the
 * agent reads them on a period and deletes a process's keys after it exits. */
struct eacgm_count_key {
	eacgm_u32 pid;
	eacgm_u32 probe_id;
	eacgm_u64 handle;
	eacgm_u64 stream;
};
struct eacgm_count_value {
	eacgm_u64 calls;
	eacgm_u64 bytes;
	eacgm_u64 windowed; /* of the calls, those made while `duty_window` was open: for the
			     * probes that are not cycled, how the process's pace inside and
			     * outside the windows compares (the cycled probes' real cost) */
	eacgm_u64 switching; /* of the calls, those made while the cycled probes were being
			      * attached or detached: neither inside nor outside */
	/* For the probes that are not cycled, while the duty cycle runs: the time from each
	 * call to the thread's previous one of them, where both fell in the same open window
	 * (in_*) or the same stretch with the cycled probes gone (out_*); their means are the
	 * process's pace inside and outside, with no window edge cutting a step. */
	eacgm_u64 in_gap_ns;
	eacgm_u64 in_gaps;
	eacgm_u64 out_gap_ns;
	eacgm_u64 out_gaps;
};

/* Durations of the sampled calls of counted probes: one key per (process, probe, log
 * bucket), the bucket being eacgm_hist_key() of the duration, so these buckets are the
 * user-space latency sketch's own (src/analysis/latency_sketch.h). */
struct eacgm_duration_key {
	eacgm_u32 pid;
	eacgm_u32 probe_id;
	eacgm_u32 bucket;
	eacgm_u32 pad;
};
struct eacgm_duration_value {
	eacgm_u64 count;
	eacgm_u64 sum_ns;
	eacgm_u32 errors; /* of these calls, how many failed (EACGM_PROBE_RET_ERR) */
	eacgm_u32 held;   /* of these calls, those held off the CPU for at least half their time */
	eacgm_u64 held_sum_ns;   /* their durations summed */
	eacgm_u64 held_delay_ns; /* their waits for a CPU inside the calls, summed */
};

/* The waiting call each thread is in (`calls_in_flight`, bpf/trace.bpf.c): a hash map
 * keyed by thread id, with an entry per thread that has made a call of an
 * EACGM_PROBE_WAIT probe (deleted at the thread's exit). Read by the agent about once a
 * second (the calls in flight) and by the Python stack sampler (bpf/py_sample.bpf.c),
 * which shares the map (the call a sampled thread waits in). The entry of a waiting call
 * writes it into the thread's entry, ts_ns last; its return sets sp and ts_ns to 0:
 * ts_ns 0, no call. A waiting call made inside another (a runtime synchronization
 * reaching the driver's: its stack pointer is below the entry's sp) leaves the outer one.
 * `sp` is the stack pointer at the entry (the return address's slot): the thread is
 * inside the call while its own stack pointer is below it, which a sample checks, so a
 * return never seen (longjmp) does not name the call in its stacks. `args` are the
 * call's captured words at entry: `read_mask` bit i says argument i was read (per call:
 * all of them, out-parameters as the pointer; counted: those the count reads),
 * `fault_mask` which of those faulted. `comm` is the thread's name at the call's entry
 * (per call), or when the entry was made (counted probes). */
#define EACGM_CALLS_IN_FLIGHT_MAX 4096 /* threads that have made a waiting call, machine-wide */
struct eacgm_call_in_flight {
	eacgm_u64 ts_ns; /* entry, CLOCK_MONOTONIC; 0: in no waiting call */
	eacgm_u64 sp;	 /* stack pointer at the entry; 0: in no waiting call */
	eacgm_u32 pid;
	eacgm_u32 tid;
	eacgm_u32 probe_id;
	eacgm_u8 nargs;
	eacgm_u8 read_mask;
	eacgm_u8 fault_mask;
	eacgm_u8 pad;
	char comm[EACGM_COMM_LEN];
	eacgm_u64 args[EACGM_MAX_ARGS];
};

/* The log-linear bucket scheme shared by the kernel's duration histograms and the
 * latency sketch: values below 2^bits are their own bucket; above, each power of two
 * is split into 2^bits equal buckets. A bucket [l, u) reported as 2lu / (l + u) is within
 * 1 / (2^(bits+1) + 1) of every value in it (0.78% at 6 bits). Integer only, so the BPF
 * programs compute the same key as user space. */
#define EACGM_HIST_BITS 6

static inline eacgm_u32 eacgm_log2_u64(eacgm_u64 v)
{
	eacgm_u32 r = 0;
	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

static inline eacgm_u32 eacgm_hist_key_bits(eacgm_u64 v, eacgm_u32 bits)
{
	if (v < ((eacgm_u64)1 << bits))
		return (eacgm_u32)v;
	eacgm_u32 e = eacgm_log2_u64(v);
	eacgm_u32 shift = e - bits;
	return ((shift + 1) << bits) + (eacgm_u32)((v >> shift) - ((eacgm_u64)1 << bits));
}

static inline eacgm_u32 eacgm_hist_key(eacgm_u64 v) { return eacgm_hist_key_bits(v, EACGM_HIST_BITS); }

/* Record types. */
enum eacgm_record_type {
	EACGM_REC_CALL = 1,        /* one traced call */
	EACGM_REC_EXEC = 2,        /* a process (pid) exec'd: discovery hint */
	EACGM_REC_LIB_LOADED = 3,  /* the dynamic loader changed a process's link map */
};

/* Record flags. */
#define EACGM_REC_HAS_EXIT 0x1     /* dur_ns and ret are valid */
#define EACGM_REC_STR_TRUNC 0x2    /* str was cut at EACGM_STR_LEN - 1 bytes */
#define EACGM_REC_NESTED 0x4       /* made inside a call of an EACGM_PROBE_OUTER probe */
#define EACGM_REC_STR2_TRUNC 0x8   /* str2 was cut at EACGM_STR2_LEN - 1 bytes */
#define EACGM_REC_STOPPED 0x10     /* hint: the process was stopped (SIGSTOP) until attached */
#define EACGM_REC_TALLIED 0x20     /* the call is counted in `call_counts` (EACGM_PROBE_TALLY): the
				    * record says what it did, the count that it happened */
#define EACGM_REC_RUN_DELAY 0x40   /* run_delay_ns is valid (the kernel keeps sched_info) */

/* One record per call (or per discovery hint). The string areas come last, so a
 * record ends after the last area its probe uses: EACGM_REC_SIZE_* bytes. */
struct eacgm_record {
	eacgm_u64 ts_ns;     /* entry time, CLOCK_MONOTONIC */
	eacgm_u64 dur_ns;    /* exit - entry, 0 when entry-only */
	eacgm_u32 pid;       /* thread-group id */
	eacgm_u32 tid;
	eacgm_u32 probe_id;  /* attach cookie */
	eacgm_u16 type;      /* enum eacgm_record_type */
	eacgm_u16 flags;     /* EACGM_REC_* */
	eacgm_s64 ret;       /* return value (rax) */
	eacgm_u8 fault_mask; /* bit i: argument i could not be read */
	eacgm_u8 nargs;
	eacgm_u8 pad[2];
	/* Of dur_ns, the time the thread waited runnable for a CPU (its scheduler run delay,
	 * preemptions included; not time blocked in the call); saturates at ~4.3 s. */
	eacgm_u32 run_delay_ns;
	char comm[EACGM_COMM_LEN];
	eacgm_u64 args[EACGM_MAX_ARGS]; /* captured words (dim3: x | y << 32) */
	eacgm_u32 ext[EACGM_MAX_ARGS];  /* dim3: z */
	char str[EACGM_STR_LEN];
	char str2[EACGM_STR2_LEN]; /* a second string (Python: the source file) */
};

#define EACGM_REC_SIZE_NO_STR 160 /* up to str: probes without string captures */
#define EACGM_REC_SIZE_STR 224    /* up to str2 */
#define EACGM_REC_SIZE_FULL 352   /* sizeof(struct eacgm_record) */

/* Counters the BPF side keeps (per-CPU array indexed by these). */
enum eacgm_counter {
	EACGM_CNT_RINGBUF_DROPS = 0, /* ring buffer full: record lost */
	EACGM_CNT_LOST_EXITS = 1,    /* an entry was never followed by its exit */
	EACGM_CNT_ORPHAN_EXITS = 2,  /* an exit whose entry was not seen */
	EACGM_CNT_READ_FAULTS = 3,   /* argument reads that faulted */
	EACGM_CNT_NO_PROBE = 4,      /* cookie without a probe entry */
	EACGM_CNT_CALLS_OPENED = 5,  /* entries stored to wait for their exit */
	EACGM_CNT_CALLS_CLOSED = 6,  /* stored entries completed or given up as lost */
	EACGM_CNT_TOO_DEEP = 7,      /* entries not stored: EACGM_MAX_INFLIGHT calls open */
	EACGM_CNT_EXITS_BEFORE_ATTACH = 8, /* a traced thread's exit whose entry ran before
					    * the entry probe was attached (--pid, late attach) */
	EACGM_CNT_COUNT_MAP_FULL = 9,	   /* counted calls not kept: `call_counts` and
					    * `call_counts_spill` could not take their key */
	EACGM_CNT_DURATION_MAP_FULL = 10, /* sampled durations not kept: `call_durations` full */
	EACGM_CNT_SWITCH_TRAPS = 11,	  /* hits of cycled probes while they were being attached
					   * or detached (any process: before the pid filter) */
	EACGM_CNT_IN_FLIGHT_FULL = 12,	  /* waiting calls not listed: `calls_in_flight` was full */
	EACGM_CNT_COUNT_SPILLED = 13,	  /* counted calls kept in `call_counts_spill`: `call_counts`
					   * could not take their key */
	EACGM_CNT_MAX = 14,
};

#endif
