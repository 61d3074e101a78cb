"""NCCL collectives with the original eACGM's API, until Ctrl-C; then nccl.json. Try it
with tests/programs/nccl_calls (build/nccl_calls).

    sudo PYTHONPATH=build/python python3 examples/sampler_nccl.py
"""
import json

from eacgm.bpf import BccBPF
from eacgm.collector import to_perfetto
from eacgm.sampler import eBPFSampler

NCCL = "/usr/lib/x86_64-linux-gnu/libnccl.so.2"

# The element count is argument 3 of the collectives and argument 2 of send and receive.
template = """
int <Sym>Entry(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    u64 count = PT_REGS_PARM<Arg>(ctx);
    bpf_trace_printk("%ld@start@<Sym>@%ld\\n", ts, count * 8);
    return 0;
};

int <Sym>Exit(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@end@<Sym>\\n", ts);
    return 0;
};
"""
count_arg = {"ncclAllReduce": 3, "ncclReduce": 3, "ncclBroadcast": 3, "ncclAllGather": 3, "ncclSend": 2,
             "ncclRecv": 2}
text = "".join(template.replace("<Sym>", sym).replace("<Arg>", str(arg)) for sym, arg in count_arg.items())

bpf = BccBPF("NCCLeBPF", text, ["-w"])
attach_config = [{"name": "NCCLSampler", "exe_path": [NCCL], "exe_sym": list(count_arg)}]

sampler = eBPFSampler(bpf)
sampler.run(attach_config)
print("sampling; Ctrl-C ends", flush=True)

states = []
while True:
    try:
        states += sampler.sample(time_stamp=1)
    except KeyboardInterrupt:
        break

sampler.close()
with open("nccl.json", "w", encoding="utf-8") as f:
    json.dump(to_perfetto(states), f, indent=4)
print(f"nccl.json: {len(states)} states", flush=True)
