# Shared by the device checks (sourced): the torch interpreter, the skip rule (exit 77),
# and the carried libraries.
#   PY          the torch interpreter ($TORCH_PY, else /opt/torch/.venv's)
#   skip MSG    prints "SKIP: MSG" and exits 77
#   carry_libs BIN_DIR   puts BIN_DIR/lib (the carry's libraries) on LD_LIBRARY_PATH
#   need_torch_gpu       skips without the interpreter or a GPU nvidia-smi can see
PY=${TORCH_PY:-/opt/torch/.venv/bin/python3}
skip() { echo "SKIP: $*" >&2; exit 77; }
carry_libs() { [[ -d "$1/lib" ]] && export LD_LIBRARY_PATH="$1/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; true; }
need_torch_gpu() {
  [[ -x "$PY" ]] || skip "$PY not found"
  nvidia-smi -L >/dev/null 2>&1 || skip "nvidia-smi cannot see a GPU"
}
