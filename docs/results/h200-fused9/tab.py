#!/usr/bin/env python3
"""fused9's tables: per M, every tile's median µs over the sweep's rounds, its median paired ratio to
128_160_2 (the same rounds), and torch.compile's hc_up time from the anchor in the same call.

    python3 tab.py hc.db torch.json
"""
import json, sqlite3, statistics, sys

db, tj = sys.argv[1:3]
comp = {r["M"]: r["us"] for r in json.load(open(tj)) if r["op"] == "hc_up" and r["form"] == "compiled"}
con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
q = """SELECT c.m, k.tile, s.round, s.us FROM cell c JOIN candidate k ON k.cell_id = c.id
       JOIN sample s ON s.candidate_id = k.id WHERE k.vendor = 0 AND k.aa = 0 AND k.status = 'ok'"""
by = {}
for m, tile, rnd, us in con.execute(q):
    by.setdefault(m, {}).setdefault(tile, {}).setdefault(rnd, []).append(us)
for m in sorted(by):
    ts = by[m]
    base = ts.get("128_160_2")
    print(f"M {m}: torch.compile {comp.get(m, float('nan')):.2f} µs")
    rows = []
    for tile, rs in ts.items():
        all_us = [u for v in rs.values() for u in v]
        med = statistics.median(all_us)
        ratio = float("nan")
        if base:
            pr = [statistics.median(rs[r]) / statistics.median(base[r]) for r in rs if r in base]
            ratio = statistics.median(pr) if pr else ratio
        rows.append((med, tile, ratio))
    for med, tile, ratio in sorted(rows):
        print(f"  {med:7.2f}  ×128_160_2 {ratio:.3f}  vs torch {med / comp.get(m, float('nan')):.3f}  {tile}")
