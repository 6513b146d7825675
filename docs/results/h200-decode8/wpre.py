#!/usr/bin/env python3
"""wpre.py DB torch.json OP: per cell (M), every tile's median µs over the sweep's rounds, its median
per-round ratio to its twin without .wpreN (the whole first fill before the wait) where that twin was
timed, and the tile's ratio to torch.compile's OP (hc_up or swiglu) in the same call."""
import json, re, sqlite3, statistics, sys

db, tj, op = sys.argv[1:4]
comp = {r["M"]: r["us"] for r in json.load(open(tj)) if r["op"] == op and r["form"] == "compiled"}
con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
q = """SELECT c.m, k.tile, s.round, s.us FROM cell c JOIN candidate k ON k.cell_id = c.id
       JOIN sample s ON s.candidate_id = k.id WHERE k.vendor = 0 AND k.aa = 0 AND k.status = 'ok'"""
by = {}
for m, tile, rnd, us in con.execute(q):
    by.setdefault(m, {}).setdefault(tile.split("/", 1)[-1], {}).setdefault(rnd, []).append(us)
for m in sorted(by):
    ts = by[m]
    c = comp.get(m, float("nan"))
    print(f"\nM {m}: torch.compile {c:.2f} µs\n")
    print("| tile | median µs | / twin without WPRE | / torch.compile |\n|---|---:|---:|---:|")
    rows = []
    for tile, rs in ts.items():
        med = statistics.median([u for v in rs.values() for u in v])
        twin = ts.get(re.sub(r"\.wpre\d+", "", tile)) if ".wpre" in tile else None
        r = float("nan")
        if twin:
            pr = [statistics.median(rs[k]) / statistics.median(twin[k]) for k in rs if k in twin]
            r = statistics.median(pr) if pr else r
        rows.append((med, tile, r))
    for med, tile, r in sorted(rows):
        print(f"| `{tile}` | {med:.2f} | {'' if r != r else f'{r:.3f}'} | {med / c:.3f} |")
