"""The original API (eacgm.bpf, eacgm.sampler, eacgm.collector) with real eBPF on the
nesting test program: exactly the calls made, in order, paired, nested calls kept."""
import json
import os

import pytest

import eacgm
from eacgm.bpf import BccBPF
from eacgm.collector import to_perfetto
from eacgm.sampler import eBPFSampler, eBPFSamplerState
from conftest import NEST_CALLS

TEXT = """
#include <uapi/linux/ptrace.h>

int nest_outerEntry(struct pt_regs *ctx){
    u64 x = PT_REGS_PARM1(ctx);
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@start@nest_outer@%ld\\n", ts, x);
    return 0;
};

int nest_outerExit(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@end@nest_outer@%d\\n", ts, PT_REGS_RC(ctx));
    return 0;
};

int nest_innerEntry(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    u32 x = PT_REGS_PARM1(ctx) & 0xFFFF;
    bpf_trace_printk("%ld@start@nest_inner@%u\\n", ts, x);
    return 0;
};

int nest_innerExit(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@end@nest_inner@%d\\n", ts, PT_REGS_RC(ctx));
    return 0;
};
"""


def expected_states():
    """(ph, name, value) in time order: outer(x) holds inner(x); inner returns 2x."""
    out = []
    for name, x, ret in NEST_CALLS:
        if name == "nest_outer":
            out += [("start", "nest_outer", x), ("start", "nest_inner", x), ("end", "nest_inner", 2 * x),
                    ("end", "nest_outer", ret)]
        elif not any(n == "nest_outer" and ox == x for n, ox, _ in NEST_CALLS):
            out += [("start", "nest_inner", x), ("end", "nest_inner", ret)]
    return out


def sample_until_done(sampler, prog):
    states = []
    prog.go()
    while prog.proc.poll() is None:
        states += sampler.sample(time_stamp=0.2)
    states += sampler.sample(time_stamp=0.5)
    return [s for s in states if s.pid == prog.pid]


def attach_config(lib_path):
    return [{"name": "NestSampler", "exe_path": [lib_path], "exe_sym": ["nest_outer", "nest_inner"]}]


def test_sampler_sees_exactly_the_calls(bin_dir, gated):
    prog = gated(str(bin_dir / "nest_calls"))
    sampler = eBPFSampler(BccBPF("NesteBPF", TEXT, ["-w"]))
    sampler.run(attach_config(str(bin_dir / "libeacgm_nest.so")))
    try:
        states = sample_until_done(sampler, prog)
    finally:
        sampler.close()
    assert prog.finish()[0] == 0
    assert all(isinstance(s, eBPFSamplerState) for s in states)
    got = [(s.message[0], s.message[1], int(s.message[2])) for s in states]
    assert got == expected_states()
    assert {(s.task, s.pid, s.tid, s.cpu) for s in states} == {("nest_calls", prog.pid, prog.pid, -1)}
    stamps = [s.timestamp for s in states]
    assert stamps == sorted(stamps)
    # bpf_ktime_get_ns(): CLOCK_MONOTONIC, as the original's timestamps were.
    import time
    assert abs(stamps[-1] - time.monotonic_ns()) < 60e9

    events = [s.collect() for s in states]
    assert events[0] == {"name": "nest_outer", "cat": "other", "pid": prog.pid, "tid": prog.pid, "cpu": -1,
                         "ts": stamps[0] / 1000, "ph": "B", "message": ["1"]}
    trace = to_perfetto(states)
    assert len(trace) == 2 * len(NEST_CALLS)  # nested calls keep their pairs
    assert [e["ph"] for e in trace].count("B") == len(NEST_CALLS)
    json.dumps(trace)
    # B/E nest properly per thread, as Perfetto requires.
    stack = []
    for e in trace:
        if e["ph"] == "B":
            stack.append(e["name"])
        else:
            assert stack.pop() == e["name"]
    assert not stack


def test_missing_exe_path_is_resolved_by_library_name(bin_dir, gated, caplog):
    prog = gated(str(bin_dir / "nest_calls"))
    sampler = eBPFSampler(BccBPF("NesteBPF", TEXT))
    sampler.run(attach_config("/home/someone/miniconda3/envs/x/lib/libeacgm_nest.so.1"))
    try:
        states = sample_until_done(sampler, prog)
    finally:
        sampler.close()
    assert "probing the files named libeacgm_nest.so*" in caplog.text
    assert [(s.message[0], s.message[1], int(s.message[2])) for s in states] == expected_states()


def test_trace_ebpf_one_state_at_a_time(bin_dir, gated):
    prog = gated(str(bin_dir / "nest_calls"))
    bpf = BccBPF("NesteBPF", TEXT)
    bpf.attach_uprobe(str(bin_dir / "libeacgm_nest.so"), "nest_inner", "nest_innerEntry")
    assert bpf.trace_ebpf(True).is_none()  # the first read starts tracing
    prog.go()
    got = []
    import time
    deadline = time.monotonic() + 30
    while len(got) < 5 and time.monotonic() < deadline:
        state = bpf.trace_ebpf(True)
        if not state.is_none() and state.pid == prog.pid:
            got.append(int(state.message[2]))
    assert bpf.trace_ebpf(True).is_none()
    bpf.cleanup()
    assert got == [1, 10, 2, 3, 20]  # entries only: no uretprobe was attached


def test_missing_symbol_raises_and_leaves_nothing_attached(bin_dir, gated):
    prog = gated(str(bin_dir / "nest_calls"))
    bpf = BccBPF("NesteBPF", TEXT + "int nest_nowhereEntry(struct pt_regs *ctx){ return 0; }\n")
    sampler = eBPFSampler(bpf)
    with pytest.raises(eacgm.UsageError) as err:
        sampler.run([{"name": "x", "exe_path": [str(bin_dir / "libeacgm_nest.so")], "exe_sym": ["nest_nowhere"]}])
    assert "nest_nowhere" in str(err.value) and "\n" not in str(err.value)
    assert bpf._trace is None and not bpf._attachments
    prog.go()
    assert prog.finish()[0] == 0


def test_text_outside_the_subset_raises_at_construction():
    with pytest.raises(eacgm.BPFTextError) as err:
        BccBPF("x", TEXT.replace("& 0xFFFF", "% 7"))
    assert str(err.value).startswith("BPF text line 19 in nest_innerEntry: operator '%'")


def test_attach_unknown_function():
    bpf = BccBPF("x", TEXT)
    with pytest.raises(eacgm.UsageError, match="no function nest_middleEntry"):
        bpf.attach_uprobe("/lib/libc.so.6", "malloc", "nest_middleEntry")


SLIPPED_CUDA = """
int cudaMemcpyEntry(struct pt_regs *ctx){
    u64 byte_length = PT_REGS_PARM3(ctx);
    u64 memcpy_kind = PT_REGS_PARM4(ctx);
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@start@cudaMemcpy@%ld@%ld\\n", ts, memcpy_kind);
    return 0;
};
int cudaMemcpyExit(struct pt_regs *ctx){
    bpf_trace_printk("%ld@end@cudaMemcpy\\n", bpf_ktime_get_ns());
    return 0;
};
int cudaFreeEntry(struct pt_regs *ctx){
    u64 malloc_ptr = PT_REGS_PARM1(ctx);
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@start@cudaFree@%ld\\n", malloc_ptr, ts);
    return 0;
};
int cudaFreeExit(struct pt_regs *ctx){
    bpf_trace_printk("%ld@end@cudaFree\\n", bpf_ktime_get_ns());
    return 0;
};
"""


def test_slips_print_as_the_kernel_would(bin_dir, gated, caplog):
    """The original's CUDA demo passed cudaMemcpy's printk one argument too few and
    cudaFree's its pointer where the timestamp goes: they print that way here too."""
    from test_examples import linked_library

    prog = gated(str(bin_dir / "cuda_calls"))
    bpf = BccBPF("CUDAeBPF", SLIPPED_CUDA, ["-w"])
    assert "3 conversions, 2 arguments" in caplog.text
    sampler = eBPFSampler(bpf)
    sampler.run([{"name": "CUDASampler", "exe_path": [linked_library(bin_dir / "cuda_calls", "libcudart")],
                  "exe_sym": ["cudaMemcpy", "cudaFree"]}])
    try:
        states = sample_until_done(sampler, prog)
    finally:
        sampler.close()
    starts = [s for s in states if s.message[0] == "start"]
    copies = [s for s in starts if s.message[1] == "cudaMemcpy"]
    frees = [s for s in starts if s.message[1] == "cudaFree"]
    assert [s.message for s in copies] == [["start", "cudaMemcpy", "1", "0"]]  # kind, then the missing one
    # cudaMalloc failed without a GPU, so both pointers are NULL: the "timestamp" is 0 and
    # the real time is the message's last field.
    assert [s.timestamp for s in frees] == [0, 0]
    assert all(abs(int(s.message[2]) - copies[0].timestamp) < 10e9 for s in frees)
    assert len([s for s in states if s.message[0] == "end"]) == 3


def test_library_glob():
    from eacgm.bpf import library_glob

    assert library_glob("/nowhere/envs/x/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2") == "libnccl.so*"
    assert library_glob("/nowhere/envs/x/bin/python") == "python*"
    assert library_glob("/nowhere/libfoo.so") == "libfoo.so*"
    assert library_glob("/usr/bin/python3") == os.path.basename(os.path.realpath("/usr/bin/python3"))


RECURSE = """
int recurse_downEntry(struct pt_regs *ctx){
    bpf_trace_printk("%ld@start@recurse_down@%d\\n", bpf_ktime_get_ns(), PT_REGS_PARM1(ctx));
    return 0;
};
int recurse_downExit(struct pt_regs *ctx){
    bpf_trace_printk("%ld@end@recurse_down@%d\\n", bpf_ktime_get_ns(), PT_REGS_RC(ctx));
    return 0;
};
"""


def test_recursive_calls_keep_every_level(bin_dir, gated):
    prog = gated(str(bin_dir / "recurse_calls"))
    sampler = eBPFSampler(BccBPF("RecurseBPF", RECURSE))
    sampler.run([{"name": "R", "exe_path": [str(bin_dir / "libeacgm_recurse.so")], "exe_sym": ["recurse_down"]}])
    try:
        states = sample_until_done(sampler, prog)
    finally:
        sampler.close()
    one = [("start", n) for n in (3, 2, 1, 0)] + [("end", n) for n in (0, 1, 2, 3)]
    assert [(s.message[0], int(s.message[2])) for s in states] == one + one
    trace = to_perfetto(states)
    assert len(trace) == 16
    depth = max_depth = 0
    for e in trace:
        depth += 1 if e["ph"] == "B" else -1
        max_depth = max(max_depth, depth)
    assert max_depth == 4 and depth == 0
