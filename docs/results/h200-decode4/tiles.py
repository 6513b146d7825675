#!/usr/bin/env python3
"""tiles.py DB: every timed candidate of every cell, fastest first: median µs, % of copy bandwidth
(weights N·K·2 bytes per call over the device record's copy_gbps) and its ratio to the cell's
reference tile (the first --tiles entry, the cell's reference candidate)."""
import json, sqlite3, statistics, sys
c = sqlite3.connect(sys.argv[1])
copy = max(float(json.loads(p)["copy_gbps"]) for (p,) in c.execute("select props from device where backend='cuda'") if "copy_gbps" in json.loads(p))
q = """select ce.id, ce.shape, ce.n, ce.k, ce.m, ca.family, ca.tile, ca.vendor, ca.class, group_concat(s.us)
       from cell ce join candidate ca on ca.cell_id = ce.id join sample s on s.candidate_id = ca.id
       where ca.aa = 0 and ca.status = 'ok' group by ca.id order by ce.id, ca.id"""
cells = {}
for cid, shape, n, k, m, fam, tile, vendor, cls, us in c.execute(q):
    med = statistics.median(float(x) for x in us.split(","))
    cells.setdefault((cid, shape, n, k, m), []).append((fam, tile, vendor, cls, med))
print(f"copy_gbps {copy:.0f}")
for (cid, shape, n, k, m), rows in cells.items():
    ref = rows[0][4]
    print(f"\n{shape} M {m} (reference {rows[0][1]}: {ref:.2f} µs)")
    for fam, tile, vendor, cls, med in sorted(rows, key=lambda x: x[4]):
        pct = 100 * n * k * 2 / (med * 1e-6) / 1e9 / copy
        name = tile if vendor else f"{fam}/{tile}"
        print(f"  {med:7.2f} µs  {pct:5.1f}%  {med/ref:5.3f}  {name}  [{cls}]")
