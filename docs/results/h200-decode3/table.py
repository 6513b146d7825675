#!/usr/bin/env python3
"""table.py DB: per decode cell the best tile of each group, median µs and % of copy bandwidth
(weights N·K·2 bytes per call over the device record's copy_gbps): gemm_decode plain class
(PDL 0/1), gemm_decode plain with PDL 2, gemm_decode split class, best tilefit tile of class
gemm_f16 (any family), best tilefit tile of any class, cuBLAS, cuBLASLt."""
import json, sqlite3, statistics, sys
c = sqlite3.connect(sys.argv[1])
copy = max(float(json.loads(p)["copy_gbps"]) for (p,) in c.execute("select props from device where backend='cuda'") if "copy_gbps" in json.loads(p))
q = """select ce.shape, ce.n, ce.k, ce.m, ca.family, ca.tile, ca.vendor, ca.class, group_concat(s.us)
       from cell ce join candidate ca on ca.cell_id = ce.id join sample s on s.candidate_id = ca.id
       where ca.aa = 0 and ca.status = 'ok' group by ca.id order by ce.id"""
cells = {}
for shape, n, k, m, fam, tile, vendor, cls, us in c.execute(q):
    med = statistics.median(float(x) for x in us.split(","))
    cells.setdefault((shape, n, k, m), []).append((fam, tile, vendor, cls, med))
def best(rows, f):
    r = [x for x in rows if f(x)]
    return min(r, key=lambda x: x[4]) if r else None
def fmt(x, n, k):
    if x is None:
        return "–"
    pct = 100 * n * k * 2 / (x[4] * 1e-6) / 1e9 / copy
    t = x[1].replace("gemm_decode/", "").replace("gemm_wgmma/", "wgmma/").replace("gemm_stream/", "stream/")
    return f"{x[4]:.2f} ({pct:.0f}%)" + ("" if x[2] else f" `{t}`")
print(f"copy_gbps {copy:.0f} (tilefit devices --measure, same call)\n")
print("| shape | M | gemm_decode plain | gemm_decode plain, PDL 2 | gemm_decode split | best class gemm_f16 | best any class | cuBLAS | cuBLASLt |")
print("|---|---:|---|---|---|---|---|---:|---:|")
for (shape, n, k, m), rows in cells.items():
    dec = lambda x: x[0] == "gemm_decode"
    cols = [best(rows, lambda x: dec(x) and x[3] == "gemm_f16" and ".pdl2" not in x[1]),
            best(rows, lambda x: dec(x) and x[3] == "gemm_f16" and ".pdl2" in x[1]),
            best(rows, lambda x: dec(x) and x[3].startswith("gemm_f16/splitk")),
            best(rows, lambda x: not x[2] and x[3] == "gemm_f16"),
            best(rows, lambda x: not x[2]),
            best(rows, lambda x: x[1] == "cublas"), best(rows, lambda x: x[1] == "cublaslt")]
    print(f"| {shape} | {m} | " + " | ".join(fmt(x, n, k) for x in cols) + " |")
