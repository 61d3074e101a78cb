# Compares `eacgm run --json` on torch_leak_slow.py with what the program planted: the
# 64 MiB leak (address and size), the slow step's synchronisation as an anomaly (and
# what else was flagged), the hot Python function's share of samples against its share
# of the main thread's CPU time. Prints PASS/FAIL lines; exit status 1 on a FAIL.
# Usage: compare_analysis.py REPORT_JSON PROGRAM_OUTPUT [per-call]
import json
import re
import sys

doc = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
per_call = len(sys.argv) > 3
ok = True


def check(name, cond, detail):
    global ok
    ok &= bool(cond)
    print(f"{'PASS' if cond else 'FAIL'} {name}: {detail}")


m = re.search(r"leak ptr=(0x[0-9a-f]+) size=(\d+) rc=0", out)
slow = re.search(r"slow step (\d+) t0_ns (\d+) t1_ns (\d+)", out)
hot = re.search(r"hot_share ([0-9.]+) pid (\d+)", out)
pid = int(hot.group(2)) if hot else -1
rows = [p for p in doc["memory"]["processes"] if p.get("pid") == pid]
leaks = [l for r in rows for l in r.get("leaks", {}).get("largest", [])]
if m:
    found = [l for l in leaks if int(str(l["ptr"]), 16) == int(m.group(1), 16)]
    check("leak", found and found[0]["size"] == int(m.group(2)),
          f"planted {m.group(1)} {m.group(2)} B; reported {found[:1]}; process leaks "
          f"{[r.get('leaks', {}).get('count') for r in rows]} allocations, "
          f"{[r.get('leaks', {}).get('bytes') for r in rows]} bytes (the caching allocator's segments count too)")
else:
    check("leak", False, "the program did not report its cudaMalloc")
a = doc["anomalies"]
calls = a["calls"]
if slow:
    t0, t1 = int(slow.group(2)), int(slow.group(3))
    window = [c for c in calls if c["pid"] == pid and c["dur_ns"] > 0.3e9 and
              (c["sampled"] or (c["ts_ns"] <= t1 and c["ts_ns"] + c["dur_ns"] >= t0))]
    check("slow step flagged", window,
          f"slow sync {(t1 - t0) / 1e6:.0f} ms; flagged: " +
          "; ".join(f"{c['domain']}:{c['name']} {c['dur_ns'] / 1e6:.0f} ms x{c['dur_ns'] / max(c['median_ns'], 1):.0f}"
                    f" op={c['op']} sampled={c['sampled']}" for c in window))
    others = [c for c in calls if c not in window]
    print(f"INFO other flagged calls: {len(others)} of {a['total']} total; intervals {a['interval_total']}, "
          f"level shifts {a['level_shifts']}: " +
          "; ".join(f"{c['name']} {c['dur_ns'] / 1e6:.2f} ms x{c['dur_ns'] / max(c['median_ns'], 1):.0f}" for c in others[:8]))
    if per_call:
        check("slow sync under an op", any(c["op"] for c in window), f"ops: {[c['op'] for c in window]}")
if hot and not per_call:
    share = float(hot.group(1))
    py = doc.get("python_hot_spots") or {}
    total = 0
    hot_samples = 0
    for p in py.get("processes", []):
        if p.get("pid") != pid:
            continue
        for t in p.get("threads", []):
            if t.get("tid") != pid:
                continue  # the main thread, whose CPU time the program measured
            total += t.get("samples", 0)
            for f in t.get("functions", []):
                if f.get("function", "").endswith("hot_python"):
                    hot_samples += f.get("self", 0)
    got = hot_samples / total if total else 0
    check("hot spot share", total and abs(got - share) <= 0.05,
          f"hot_python {got:.3f} of {total} samples vs {share:.3f} of the main thread's CPU time")
sys.exit(0 if ok else 1)
