#!/usr/bin/env bash
# Runs several device checks in one call of the GPU machine, each against the carried
# binaries (tests/gpu/make_carry.sh), each with a time limit, and prints every check's
# PASS/FAIL/SKIP lines and its exit status in one short table at the end.
# Usage: tests/gpu/run_checks.sh CARRY_DIR OUT_DIR SECONDS_EACH CHECK [CHECK...]
#   CHECK: a script name under tests/gpu/ (hang_check.sh ...), run as SCRIPT CARRY_DIR WORK_DIR
set -uo pipefail
CARRY="$(cd "${1:?usage: run_checks.sh CARRY_DIR OUT_DIR SECONDS_EACH CHECK...}" && pwd)"
OUT="${2:?}"
LIMIT="${3:?}"
shift 3
HERE="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$OUT"
echo "== machine: $(nvidia-smi -L 2>/dev/null | wc -l) GPU(s), $(uname -r), $(date -u +%FT%TZ)"
summary=""
for check in "$@"; do
  name="${check%.sh}"
  start=$(date +%s)
  timeout --kill-after=10 "$LIMIT" "$HERE/$check" "$CARRY" "$OUT/$name" >"$OUT/$name.log" 2>&1
  rc=$?
  echo "== $check: exit $rc in $(( $(date +%s) - start )) s"
  grep -E "PASS|FAIL|SKIP|^\|" "$OUT/$name.log" | tail -40
  summary+="$(printf '%-24s exit %3d  pass %3d  fail %3d' "$check" "$rc" \
    "$(grep -c PASS "$OUT/$name.log")" "$(grep -c FAIL "$OUT/$name.log")")"$'\n'
done
echo "== summary"
printf '%s' "$summary"
