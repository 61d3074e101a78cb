#!/usr/bin/env bash
# `eacgm trace --format perfetto` on a PyTorch training loop (GPU machine, root): the
# timeline against the JSON Lines trace of the same loop (tests/gpu/perfetto_check.py).
# Usage: tests/gpu/perfetto_check.sh EACGM OUT_DIR [STEPS]
set -uo pipefail
EACGM=$(readlink -f "$1") OUT=$2 STEPS=${3:-30}
PY=${TORCH_PY:-/opt/torch/.venv/bin/python3}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
train=("$PY" "$HERE/../../bench/gpu/train_step.py" --size cpu --steps "$STEPS" --warmup 5)
"$EACGM" trace --format perfetto -o "$OUT/timeline.json" -- "${train[@]}" 2>"$OUT/timeline.err"
echo "perfetto run: exit $?; $(grep -o 'done.*' "$OUT/timeline.err" | head -1)"
"$EACGM" trace -o "$OUT/trace.jsonl" -- "${train[@]}" 2>"$OUT/trace.err"
echo "jsonl run: exit $?; $(grep -o 'done.*' "$OUT/trace.err" | head -1)"
ls -la "$OUT/timeline.json" "$OUT/trace.jsonl"
"$PY" "$HERE/perfetto_check.py" "$OUT/timeline.json" "$OUT/trace.jsonl"
