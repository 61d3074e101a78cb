#!/usr/bin/env bash
# The device checks and benchmarks (tests/gpu, bench/gpu) run only on a GPU machine; here
# each must at least parse: every shell script with `bash -n`, every Python script with
# Python's own parser. Usage: tests/device_scripts_check.sh SOURCE_DIR
set -uo pipefail
shopt -s nullglob
SRC=${1:?usage: device_scripts_check.sh SOURCE_DIR}
status=0
for f in "$SRC"/tests/gpu/*.sh "$SRC"/bench/gpu/*.sh "$SRC"/bench/*.sh; do
  [ -e "$f" ] || continue
  bash -n "$f" || { echo "does not parse: $f"; status=1; }
done
python3 - "$SRC"/tests/gpu/*.py "$SRC"/bench/gpu/*.py <<'PY' || status=1
import ast, sys
bad = 0
for path in sys.argv[1:]:
    try:
        ast.parse(open(path).read(), path)
    except SyntaxError as e:
        print(f"does not parse: {path}: {e}")
        bad = 1
sys.exit(bad)
PY
exit $status
