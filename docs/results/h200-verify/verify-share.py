#!/usr/bin/env python3
"""The verification share of each cell's time, from a sweep's progress lines.

tilefit sweep ends each cell's progress line with its phases, e.g.
  [4/65] hc_read M=1983 done (...) [inputs 0.61s, load 0.00s, verify 0.24s, exact 0.05s, time 0.34s]
This prints, per cell, the verification (verify + exact) against the sum of
its phases, the largest share and the sweep's overall share. A part of a
phase ("verify/ref 0.20s": how long the verify phase's float64 checks waited
for their reference) is printed but not added to the cell's time.

    python3 docs/results/h200-verify/verify-share.py sweep.err
"""
import re
import sys

line = re.compile(r"^\[(\d+)/(\d+)\] (\S+) M=(\d+) done .*\[(.*)\]\s*$")
rows = []
for text in open(sys.argv[1], encoding="utf-8"):
    m = line.match(text.strip())
    if not m:
        continue
    phases = {}
    for part in m.group(5).split(","):
        name, _, secs = part.strip().rpartition(" ")
        if secs.endswith("s"):
            phases[name] = float(secs[:-1])
    total = sum(v for k, v in phases.items() if "/" not in k)
    ver = phases.get("verify", 0) + phases.get("exact", 0)
    rows.append((m.group(3), int(m.group(4)), total, ver, phases))
if not rows:
    sys.exit("no progress lines with phases")
for shape, mm, total, ver, ph in rows:
    print(f"{shape:8s} M={mm:5d}  cell {total:6.2f} s  verify+exact {ver:5.2f} s  ({100 * ver / max(total, 1e-9):4.1f}%)  " +
          ", ".join(f"{k} {v:.2f}" for k, v in ph.items()))
worst = max(rows, key=lambda r: r[3] / max(r[2], 1e-9))
tot, ver = sum(r[2] for r in rows), sum(r[3] for r in rows)
print(f"largest share: {worst[0]} M={worst[1]} {100 * worst[3] / max(worst[2], 1e-9):.1f}%; over the sweep: verify+exact {ver:.1f} s of {tot:.1f} s ({100 * ver / tot:.1f}%)")
sys.exit(1 if worst[3] / max(worst[2], 1e-9) > 0.25 else 0)
