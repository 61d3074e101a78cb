# Checks eacgm's NCCL events against what each rank says it called.
# Usage: compare_nccl.py EVENTS_JSONL OUT_DIR
import collections
import glob
import json
import sys

events = [json.loads(l) for l in open(sys.argv[1])]
ok = True
print(f"{'rank':>4} {'collective':16} {'calls (eacgm/truth)':>20} {'bytes (eacgm/truth)':>28} {'rank/nranks seen':>18}")
for path in sorted(glob.glob(f"{sys.argv[2]}/nccl_rank*.json")):
    truth = json.load(open(path))
    mine = [e for e in events if e["pid"] == truth["pid"] and e["domain"] == "nccl" and not e.get("nested")]
    want = collections.defaultdict(list)
    for name, nbytes in truth["calls"]:
        want[name].append(nbytes)
    # In-place broadcasts reach NCCL as ncclBcast (which calls ncclBroadcast, nested).
    aliases = {"ncclBroadcast": {"ncclBroadcast", "ncclBcast"}}
    for name, sizes in want.items():
        names = aliases.get(name, {name})
        got = [e for e in mine if e["name"] in names and e["args"].get("bytes") in set(sizes)]
        got_bytes = sum(e["args"]["bytes"] for e in got)
        ranks = {(e["args"].get("rank"), e["args"].get("nranks")) for e in got}
        good = len(got) == len(sizes) and got_bytes == sum(sizes) and ranks == {(truth["rank"], truth["world"])}
        ok &= good
        print(f"{truth['rank']:>4} {name:16} {len(got):>9}/{len(sizes):<10} {got_bytes:>13}/{sum(sizes):<14} {str(ranks):>18} {'ok' if good else 'MISMATCH'}")
    inits = [e for e in mine if e["name"].startswith("ncclCommInitRank")]
    print(f"     init calls: {[(e['name'], e['ret'], e['args'].get('rank'), e['args'].get('nranks')) for e in inits]}")
print("RESULT:", "PASS" if ok else "FAIL")
