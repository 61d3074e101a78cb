"""PyTorch ops (libtorch_python's THPVariable_* bindings) with the original eACGM's API,
until Ctrl-C; then torch.json. Try it with tests/programs/fake_torch (build/torch_ops,
whose build/fake_torch/libtorch_python.so has the bindings' symbols), or a real PyTorch.

    sudo PYTHONPATH=build/python python3 examples/sampler_torch.py
"""
import json

from eacgm.bpf import BccBPF
from eacgm.collector import to_perfetto
from eacgm.sampler import eBPFSampler

TORCH_PYTHON = "/opt/torch/.venv/lib/python3.12/site-packages/torch/lib/libtorch_python.so"

func_sym = {
    "TorchAdd": "_ZN5torch8autogradL15THPVariable_addEP7_objectS2_S2_",
    "TorchSub": "_ZN5torch8autogradL15THPVariable_subEP7_objectS2_S2_",
    "TorchMul": "_ZN5torch8autogradL15THPVariable_mulEP7_objectS2_S2_",
    "TorchMatmul": "_ZN5torch8autogradL18THPVariable_matmulEP7_objectS2_S2_",
    "TorchDiv": "_ZN5torch8autogradL15THPVariable_divEP7_objectS2_S2_",
    "TorchReLU": "_ZN5torch8autogradL16THPVariable_reluEP7_objectS2_S2_",
    "TorchSigmoid": "_ZN5torch8autogradL19THPVariable_sigmoidEP7_objectS2_S2_",
    "TorchTanh": "_ZN5torch8autogradL16THPVariable_tanhEP7_objectS2_S2_",
    "TorchSoftmax": "_ZN5torch8autogradL19THPVariable_softmaxEP7_objectS2_S2_",
    "TorchGeLU": "_ZN5torch8autogradL16THPVariable_geluEP7_objectS2_S2_",
}

template = """
int <TorchSym>Entry(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@start@<TorchFunc>\\n", ts);
    return 0;
};

int <TorchSym>Exit(struct pt_regs *ctx){
    u64 ts = bpf_ktime_get_ns();
    bpf_trace_printk("%ld@end@<TorchFunc>\\n", ts);
    return 0;
};
"""

text = ""
for func, sym in func_sym.items():
    text += template.replace("<TorchSym>", sym).replace("<TorchFunc>", func)

bpf = BccBPF("TorcheBPF", text, ["-w"])
attach_config = [{"name": "TorchSampler", "exe_path": [TORCH_PYTHON], "exe_sym": list(func_sym.values())}]

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
with open("torch.json", "w", encoding="utf-8") as f:
    json.dump(to_perfetto(states), f, indent=4)
print(f"torch.json: {len(states)} states", flush=True)
