#!/usr/bin/env python3
"""pivot.py DB [FAMILY]: per shape, one row per tile (FAMILY's, default gemm_decode; vendors too),
median µs and % of copy bandwidth at each M (weights N·K·2 bytes per call over the database's
copy_gbps), rows in the order of their mean µs."""
import json, sqlite3, statistics, sys
c = sqlite3.connect(sys.argv[1])
fam_want = sys.argv[2] if len(sys.argv) > 2 else "gemm_decode"
copy = max(float(json.loads(p)["copy_gbps"]) for (p,) in c.execute("select props from device where backend='cuda'") if "copy_gbps" in json.loads(p))
q = """select ce.shape, ce.n, ce.k, ce.m, ca.family, ca.tile, ca.vendor, group_concat(s.us)
       from cell ce join candidate ca on ca.cell_id = ce.id join sample s on s.candidate_id = ca.id
       where ca.aa = 0 and ca.status = 'ok' group by ca.id"""
shapes = {}
for shape, n, k, m, fam, tile, vendor, us in c.execute(q):
    if not vendor and fam != fam_want:
        continue
    med = statistics.median(float(x) for x in us.split(","))
    name = tile if vendor else tile.replace(fam + "/", "")
    shapes.setdefault((shape, n, k), {}).setdefault(name, {})[m] = med
print(f"copy_gbps {copy:.0f}")
for (shape, n, k), tiles in shapes.items():
    ms = sorted({m for t in tiles.values() for m in t})
    print(f"\n| {shape} tile | " + " | ".join(f"M {m}" for m in ms) + " |")
    print("|---|" + "---:|" * len(ms))
    for name, t in sorted(tiles.items(), key=lambda kv: statistics.mean(kv[1].values())):
        cells = []
        for m in ms:
            if m in t:
                cells.append(f"{t[m]:.2f} ({100 * n * k * 2 / (t[m] * 1e-6) / 1e9 / copy:.0f}%)")
            else:
                cells.append("–")
        print(f"| `{name}` | " + " | ".join(cells) + " |")
