#!/usr/bin/env python3
"""xe.py COPY_GBPS BASE1.db XE1.db BASE2.db XE2.db: per shape, tile and M, the median µs of the base
binary and of the xe-diagnostic binary in each of the two rounds, the % of copy bandwidth of the
mean of each pair, and xe / base (mean of the two rounds' ratios)."""
import sqlite3, statistics, sys
copy = float(sys.argv[1])
def meds(path):
    c = sqlite3.connect(path)
    q = """select ce.shape, ce.n, ce.k, ce.m, ca.tile, group_concat(s.us)
           from cell ce join candidate ca on ca.cell_id = ce.id join sample s on s.candidate_id = ca.id
           where ca.aa = 0 and ca.status = 'ok' and ca.vendor = 0 group by ca.id"""
    return {(sh, n, k, ca.replace("gemm_decode/", ""), m): statistics.median(float(x) for x in us.split(","))
            for sh, n, k, m, ca, us in c.execute(q)}
b1, x1, b2, x2 = (meds(p) for p in sys.argv[2:6])
pct = lambda n, k, us: 100 * n * k * 2 / (us * 1e-6) / 1e9 / copy
print(f"copy_gbps {copy:.0f}\n")
print("| shape | tile | M | base µs (r1, r2) | xe µs (r1, r2) | base % | xe % | xe / base |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for key in sorted(b1, key=lambda t: (t[0], t[3], t[4])):
    sh, n, k, tile, m = key
    if key not in x1 or key not in b2 or key not in x2:
        continue
    r = (x1[key] / b1[key] + x2[key] / b2[key]) / 2
    bm, xm = (b1[key] + b2[key]) / 2, (x1[key] + x2[key]) / 2
    print(f"| {sh} | `{tile}` | {m} | {b1[key]:.2f}, {b2[key]:.2f} | {x1[key]:.2f}, {x2[key]:.2f} | {pct(n, k, bm):.0f} | {pct(n, k, xm):.0f} | {r:.3f} |")
