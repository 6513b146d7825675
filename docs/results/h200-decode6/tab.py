# tab.py CEILING.LOG...: TestReadCeiling's rows as one Markdown table per size: a row per kernel
# configuration, µs per call and % of the copy_gbps the test measured in its own process, by PDL mode
# (0: none, 1: wait at entry, 2: wait only before the sums are added, 3: preload the ring, then wait).
import re, sys
from collections import OrderedDict
for path in sys.argv[1:]:
    copy, rows = None, OrderedDict()
    for line in open(path):
        m = re.search(r"copy_gbps (\d+)", line)
        if m and copy is None:
            copy = int(m.group(1))
        m = re.search(r"ceiling_read_test.go:\d+: (\S+)\s+(.*?)\s+([\d.]+) us/call\s+(\d+) GB/s\s+([\d.]+) %copy", line)
        if not m:
            continue
        size, what, us, pct = m.group(1), m.group(2).strip(), float(m.group(3)), float(m.group(5))
        p = re.search(r" pdl(\d)$", what)
        key, pdl = (what[: p.start()], int(p.group(1))) if p else (what, None)
        rows.setdefault(size, OrderedDict()).setdefault(key, {})[pdl] = (us, pct)
    print(f"{path}: copy_gbps {copy} (same process)\n")
    for size, ks in rows.items():
        print(f"| {size} | pdl0 | pdl1 | pdl2 | pdl3 |\n|---|---:|---:|---:|---:|")
        for key, v in ks.items():
            if None in v:
                print(f"| {key} | {v[None][0]:.2f} µs, {v[None][1]:.1f} % | | | |")
                continue
            cells = [f"{v[d][0]:.2f}, {v[d][1]:.0f} %" if d in v else "" for d in range(4)]
            print(f"| {key} | " + " | ".join(cells) + " |")
        print()
