#!/usr/bin/env python3
"""h200-final9's tables from the call's outputs (run in the folder final.tgz unpacks to):

    python3 tables.py race.db torch.json

Per M: the fused operators' best tile (median of the sweep's rounds, any family) against
torch.compile, and the anchor's 11 plain GEMMs through F.linear summed per chunk (calls × µs).
"""
import json
import sqlite3
import statistics
import sys

db, tj = sys.argv[1:3]
torch = json.load(open(tj))


con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
best = {}
q = """SELECT c.op, c.shape, c.m, k.tile, s.us FROM cell c JOIN candidate k ON k.cell_id = c.id
       JOIN sample s ON s.candidate_id = k.id WHERE k.vendor = 0 AND k.aa = 0 AND k.status = 'ok'"""
med = {}
for op, shape, m, tile, us in con.execute(q):
    med.setdefault((shape, m), {}).setdefault(tile, []).append(us)
for key, ts in med.items():
    t = min(ts, key=lambda t: statistics.median(ts[t]))
    best[key] = (t, statistics.median(ts[t]))

comp = {}
flin = {}
for r in torch:
    if r["op"] == "gemm":
        flin[r["M"]] = flin.get(r["M"], 0) + r["calls"] * r["us"] / 1000
    elif r.get("form") == "compiled":
        comp[(r["op"], r["M"])] = r["us"]

print("fused operators: best tile (median µs) / torch.compile (µs) in the same call")
for op, shape in (("hc_up", "hc_up"), ("swiglu", "Wshgu")):
    for m in (256, 512, 1024, 1983, 2048):
        if (shape, m) not in best or (op, m) not in comp:
            continue
        t, us = best[(shape, m)]
        print(f"  {op:6s} M {m:5d}  {us:7.2f}  {t:45s} {comp[(op, m)]:7.2f}  {us / comp[(op, m)]:.3f}")
print("torch F.linear, the 11 plain GEMMs (ms per chunk):", {m: round(v, 3) for m, v in sorted(flin.items())})
