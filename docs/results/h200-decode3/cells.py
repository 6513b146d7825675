#!/usr/bin/env python3
"""cells.py DB [COPY_GBPS]: per decode cell, the best ok tile of each family and the vendors,
median µs over the stored samples, weight GB/s (N·K·2 bytes per call) and % of copy bandwidth
(copy_gbps from the device record in DB unless given). Also every gemm_decode tile's median."""
import json, sqlite3, statistics, sys
c = sqlite3.connect(sys.argv[1])
copy = float(sys.argv[2]) if len(sys.argv) > 2 else None
if copy is None:
    for (props,) in c.execute("select props from device where backend = 'cuda'"):
        p = json.loads(props)
        if "copy_gbps" in p:
            copy = float(p["copy_gbps"])
print(f"copy_gbps {copy}")
q = """select ce.shape, ce.n, ce.k, ce.m, ca.family, ca.tile, ca.vendor, ca.class, ca.status, ca.bitwise, group_concat(s.us)
       from cell ce join candidate ca on ca.cell_id = ce.id left join sample s on s.candidate_id = ca.id
       where ca.aa = 0 group by ca.id order by ce.id"""
cells, allrows = {}, []
for shape, n, k, m, fam, tile, vendor, cls, status, bitwise, us in c.execute(q):
    key = (shape, n, k, m)
    if status != "ok" or not us:
        allrows.append((key, fam, tile, status, None))
        continue
    med = statistics.median(float(x) for x in us.split(",") if x)
    allrows.append((key, fam, tile, status, med))
    fk = tile if vendor else fam
    cur = cells.setdefault(key, {})
    if fk not in cur or med < cur[fk][1]:
        cur[fk] = (tile, med, cls)
def gbps(n, k, us): return n * k * 2 / (us * 1e-6) / 1e9
print("| shape | M | family/vendor | best tile | µs | weight GB/s | % of copy |")
print("|---|---:|---|---|---:|---:|---:|")
for (shape, n, k, m), fams in cells.items():
    for fk, (tile, us, cls) in sorted(fams.items(), key=lambda x: x[1][1]):
        g = gbps(n, k, us)
        pct = f"{100 * g / copy:.1f}%" if copy else "?"
        print(f"| {shape} | {m} | {fk} | `{tile}` | {us:.2f} | {g:.0f} | {pct} |")
print()
print("every gemm_decode candidate (median µs, % of copy) and every failure:")
for key, fam, tile, status, med in allrows:
    if fam == "gemm_decode" or status != "ok":
        g = f"{100 * gbps(key[1], key[2], med) / copy:.1f}%" if med and copy else ""
        print(f"{key[0]} M{key[3]} {fam} {tile} {status} {med if med else ''} {g}")
