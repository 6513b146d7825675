#!/usr/bin/env python3
"""Per shape and numerics class: the best tile per M (median µs over the
cell's rounds), beside cuBLAS and cuBLASLt of the same cells. Usage:
classes.py DB... (one line per shape, class and M)."""
import sqlite3, statistics, sys, collections
rows = collections.defaultdict(dict)  # (shape,m) -> tile -> (us, class)
calls = {}
for db in sys.argv[1:]:
    c = sqlite3.connect(db)
    q = """select ce.shape, ce.m, ce.calls, ca.tile, ca.class, ca.vendor, group_concat(s.us)
           from cell ce join candidate ca on ca.cell_id = ce.id join sample s on s.candidate_id = ca.id
           where ca.status = 'ok' and ca.aa = 0 group by ca.id"""
    for shape, m, cl, tile, klass, vendor, us in c.execute(q):
        v = [float(x) for x in us.split(',')]
        rows[(shape, m)][tile] = (statistics.median(v), 'vendor' if vendor else klass)
        calls[shape] = cl
shapes = sorted({s for s, _ in rows}, key=lambda s: -calls[s])
for sh in shapes:
    ms = sorted(m for s, m in rows if s == sh)
    classes = sorted({k for m in ms for (_, k) in rows[(sh, m)].values() if k != 'vendor'})
    print(f"== {sh} ({calls[sh]} calls)")
    tot = collections.defaultdict(float)
    for m in ms:
        r = rows[(sh, m)]
        line = f"  M {m:5d} cublas {r.get('cublas', (0,))[0]:7.2f} lt {r.get('cublaslt', (0,))[0]:7.2f} |"
        tot['cublas'] += calls[sh] * r.get('cublas', (0,))[0]
        tot['cublaslt'] += calls[sh] * r.get('cublaslt', (0,))[0]
        for k in classes:
            best = min(((us, t) for t, (us, kk) in r.items() if kk == k), default=None)
            if best:
                line += f" {k.replace('gemm_f16','')or'plain'}: {best[0]:7.2f} {best[1]} |"
                tot[k] += calls[sh] * best[0]
        print(line)
    print("  per chunk (ms): " + ", ".join(f"{k.replace('gemm_f16','') or 'plain'} {v/1000:.3f}" for k, v in tot.items()))
