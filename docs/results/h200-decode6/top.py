# Summarise TestReadCeiling's log: per size, the best rows by %copy, and the best per kernel kind and pdl.
import re, sys
rows = []
for line in open(sys.argv[1]):
    m = re.search(r"ceiling_read_test.go:\d+: (\S+)\s+(.*?)\s+([\d.]+) us/call\s+(\d+) GB/s\s+([\d.]+) %copy", line)
    if m:
        rows.append((m.group(1), m.group(2).strip(), float(m.group(3)), int(m.group(4)), float(m.group(5))))
for line in open(sys.argv[1]):
    if "copy_gbps" in line:
        print(line.strip())
sizes = []
for r in rows:
    if r[0] not in sizes:
        sizes.append(r[0])
for s in sizes:
    rs = [r for r in rows if r[0] == s]
    print(f"== {s}: {len(rs)} rows")
    best = {}
    for r in rs:
        kind = r[1].split()[0]
        pdl = r[1].split()[-1] if r[1].split()[-1].startswith("pdl") else "-"
        key = (kind, pdl)
        if key not in best or r[2] < best[key][2]:
            best[key] = r
    for key in sorted(best, key=lambda k: best[k][2]):
        r = best[key]
        print(f"  {r[2]:7.2f} us {r[4]:5.1f} %  {r[1]}")
    print("  top 8 overall:")
    for r in sorted(rs, key=lambda r: r[2])[:8]:
        print(f"  {r[2]:7.2f} us {r[4]:5.1f} %  {r[1]}")
