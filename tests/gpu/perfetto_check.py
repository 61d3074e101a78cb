"""Checks a Perfetto timeline written by `eacgm trace --format perfetto` against the
JSON Lines trace of the same program: the document parses, every call of the JSON Lines
trace is an event of the timeline (complete events for calls with a duration, instants
for the rest), each thread's complete events nest (the viewers' importers need that),
the traced processes and threads are named, and the GPU counters are there.
Usage: perfetto_check.py TIMELINE.json TRACE.jsonl"""
import collections
import json
import sys

timeline_path, jsonl_path = sys.argv[1], sys.argv[2]
doc = json.load(open(timeline_path))
events = doc["traceEvents"]
ok = True


def check(what, cond, detail=""):
    global ok
    print(("PASS " if cond else "FAIL ") + what + (": " + detail if detail else ""))
    ok = ok and cond


by_ph = collections.Counter(e["ph"] for e in events)
print("events by phase:", dict(by_ph))
calls = [e for e in events if e["ph"] in ("X", "i")]
timeline_names = collections.Counter((e["cat"], e["name"], e["ph"]) for e in calls)

jsonl_names = collections.Counter()
for line in open(jsonl_path):
    r = json.loads(line)
    if r.get("domain") == "gpu":
        continue
    jsonl_names[(r["domain"], r["name"], "X" if r["dur_ns"] is not None else "i")] += 1

# Two runs of the same deterministic loop: the launches, copies and memsets each made.
for key in sorted(k for k in jsonl_names if k[1] in ("cudaLaunchKernel", "cuLaunchKernel", "cuLaunchKernelEx",
                                                      "cudaMemcpyAsync", "cudaMemsetAsync")):
    check(f"{key[1]} ({key[2]}) as often as in JSON Lines", timeline_names[key] == jsonl_names[key],
          f"{timeline_names[key]} vs {jsonl_names[key]}")
check("the timeline has launches", any(k[1].endswith("LaunchKernel") and timeline_names[k] > 0 for k in timeline_names))

named = [e for e in calls if e["name"].endswith("LaunchKernel") and e["args"]["args"].get("kernel")]
check("launches carry their kernel's name", len(named) > 0, f"{len(named)} named, e.g. "
      + (named[0]["args"]["args"]["kernel"][:60] if named else "-"))

# Nesting: on one thread, a complete event either contains the next or ends before it.
bad = 0
per_thread = collections.defaultdict(list)
for e in calls:
    if e["ph"] == "X":
        per_thread[(e["pid"], e["tid"])].append((round(e["ts"] * 1000), round(e["dur"] * 1000)))
for spans in per_thread.values():
    spans.sort(key=lambda s: (s[0], -s[1]))
    stack = []
    for ts, dur in spans:
        while stack and stack[-1] <= ts:
            stack.pop()
        if stack and ts + dur > stack[-1]:
            bad += 1
        stack.append(ts + dur)
check("complete events nest on every thread", bad == 0, f"{bad} partial overlaps in {sum(map(len, per_thread.values()))}")

meta = [e for e in events if e["ph"] == "M"]
pids = {e["pid"] for e in calls}
named_pids = {e["pid"] for e in meta if e["name"] == "process_name"}
named_threads = {(e["pid"], e["tid"]) for e in meta if e["name"] == "thread_name"}
check("every process with calls is named", pids <= named_pids, f"{len(pids)} processes")
check("every thread with calls is named", set(per_thread) <= named_threads, f"{len(per_thread)} threads")

counters = [e for e in events if e["ph"] == "C"]
gpu_counters = [e for e in counters if e["pid"] == 4194304]
check("GPU counters on the GPU track", len(gpu_counters) > 0,
      f"{len(gpu_counters)}, last {gpu_counters[-1]['name']} {gpu_counters[-1]['args']}" if gpu_counters else "")
proc_counters = [e for e in counters if e["pid"] in pids]
check("the traced process's GPU counters", len(proc_counters) > 0,
      f"{len(proc_counters)}, last {proc_counters[-1]['args']}" if proc_counters else "")
print("RESULT", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
