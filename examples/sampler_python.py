"""CPython's C API calls (PyObject_CallFunction) with the original eACGM's API, printed
as they come, until Ctrl-C. The original's lines had no `@` after the timestamp; they
still print (message is then empty). For Python functions by name, use
`eacgm.trace(catalogs=["python"])` (docs/python.md).

    sudo PYTHONPATH=build/python python3 examples/sampler_python.py
"""
from eacgm.bpf import BccBPF
from eacgm.sampler import eBPFSampler

PYTHON = "/usr/bin/python3"

text = """
#include <uapi/linux/ptrace.h>

int PyObject_CallFunctionEntry(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@start@PyObject_CallFunction\\n", ts);
    return 0;
};

int PyObject_CallFunctionExit(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@end@PyObject_CallFunction\\n", ts);
    return 0;
};
"""

bpf = BccBPF("PythoneBPF", text, ["-w"])
attach_config = [{"name": "PythonSampler", "exe_path": [PYTHON], "exe_sym": ["PyObject_CallFunction"]}]

sampler = eBPFSampler(bpf)
sampler.run(attach_config)
print("sampling; Ctrl-C ends", flush=True)

while True:
    try:
        samples = sampler.sample(time_stamp=1)
        for sample in samples:
            print(sample)
        print("---", flush=True)
    except KeyboardInterrupt:
        break

sampler.close()
