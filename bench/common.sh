# Shared by the benchmark scripts (sourced): a scratch folder removed on exit, a process's
# resident memory at its floor, and the helpers over the loops' output: train_step.py's "step_ms=" lines, cuda_loop's and
# driver_loop's "ns_per_call=" (the last such line of the input), their median (nan
# when there is none) and their spread ("low-high").
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
step_of() { sed -n 's/.*step_ms=\([0-9.]*\).*/\1/p' | tail -1; }
ns_of() { sed -n 's/.*ns_per_call=\([0-9.]*\).*/\1/p' | tail -1; }
median() { sort -n | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
spread() { sort -n | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%s-%s", lo, hi}'; }
# The lowest VmRSS (KiB) of process $1 read once a second for $2 seconds, with its RssAnon
# at that reading: what it keeps once its allocator's free pages went back, without the
# transient of one moment. Prints nothing if the process is gone.
rss_floor() {
  local floor="" anon="" r a
  for _ in $(seq "$2"); do
    sleep 1
    read -r r a < <(awk '/^VmRSS/ {r=$2} /^RssAnon/ {a=$2} END {print r, a}' "/proc/$1/status" 2>/dev/null) || break
    [ -n "$r" ] || break
    if [ -z "$floor" ] || [ "$r" -lt "$floor" ]; then floor=$r anon=$a; fi
  done
  [ -n "$floor" ] && echo "$floor $anon"
}
