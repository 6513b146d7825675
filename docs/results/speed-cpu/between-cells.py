#!/usr/bin/env python3
"""Time between cells of a tilefit sweep: its own elapsed minus compiles minus every cell's phases
(parts of a phase, "verify/ref", not counted). python3 between-cells.py sweep.err"""
import re,sys
tot=0;n=0
for l in open(sys.argv[1]):
    m=re.match(r"^\[(\d+)/(\d+)\] \S+ M=\d+ done .*\[(.*)\]\s*$",l.strip())
    if m:
        n+=1
        for part in m.group(3).split(","):
            name,_,sec=part.strip().rpartition(" ")
            if "/" not in name: tot+=float(sec[:-1])
    m=re.match(r"swept (\d+) cells .* in ([0-9.]+)(ms|s), compiles ([0-9.]+)(ms|s)",l)
    if m:
        el=float(m.group(2))/(1000 if m.group(3)=="ms" else 1); co=float(m.group(4))/(1000 if m.group(5)=="ms" else 1)
print(f"cells {n}  sweep {el:.3f}s  compiles {co:.3f}s  phases {tot:.2f}s  between cells {el-co-tot:.3f}s ({1000*(el-co-tot)/n:.1f} ms a cell)")
