#!/usr/bin/env python3
"""fused9 call 2: each PDL 2 tile against its twins in the same rounds, per cell.

    python3 twins.py DB [torch.json OP]

For every cell (shape, M): the cell's fastest tile (median µs of its rounds); then for every tile
named ….pdl2…, the median per-round ratio to its PDL 1 twin (….pdl1…) and to its twin without PDL
(the name without .pdl2), where the sweep timed them. With torch.json and OP (swiglu or hc_up), the
best tile's ratio to torch.compile's time for that operator and M in the same call.
"""
import json, sqlite3, statistics, sys

db = sys.argv[1]
comp = {}
if len(sys.argv) > 3:
    comp = {r["M"]: r["us"] for r in json.load(open(sys.argv[2])) if r["op"] == sys.argv[3] and r["form"] == "compiled"}
con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
q = """SELECT c.shape, c.m, k.tile, s.round, s.us FROM cell c JOIN candidate k ON k.cell_id = c.id
       JOIN sample s ON s.candidate_id = k.id WHERE k.vendor = 0 AND k.aa = 0 AND k.status = 'ok'"""
by = {}
for shape, m, tile, rnd, us in con.execute(q):
    by.setdefault((shape, m), {}).setdefault(tile, {}).setdefault(rnd, []).append(us)


def med(rs):
    return statistics.median([u for v in rs.values() for u in v])


def ratio(a, b):
    pr = [statistics.median(a[r]) / statistics.median(b[r]) for r in a if r in b]
    return statistics.median(pr) if pr else float("nan")


gains = []
for key in sorted(by):
    ts = by[key]
    best = min(ts, key=lambda t: med(ts[t]))
    line = f"{key[0]:8s} M {key[1]:5d}: best {med(ts[best]):8.2f} {best}"
    if key[1] in comp:
        line += f"  vs torch.compile {comp[key[1]]:.2f}: {med(ts[best]) / comp[key[1]]:.3f}"
    print(line)
    for t in sorted(ts):
        if ".pdl2" not in t:
            continue
        out = []
        for twin in (t.replace(".pdl2", ".pdl1"), t.replace(".pdl2", "")):
            if twin in ts:
                r = ratio(ts[t], ts[twin])
                out.append(f"×{twin} {r:.3f}")
                gains.append(r)
        print(f"    {med(ts[t]):8.2f} {t:34s} " + "  ".join(out))
if gains:
    print(f"PDL 2 / twin, all pairs: median {statistics.median(gains):.3f}, min {min(gains):.3f}, max {max(gains):.3f}, n {len(gains)}")
