#!/usr/bin/env python3
"""chunk.py CHOICE DB...: the plain-GEMM chunk per M with one class per shape.
CHOICE is shape=class,... (default class gemm_f16); for each shape the best
tile of its class per M (median µs) × calls, beside cuBLAS and cuBLASLt of
the same cells. Shapes missing from the DBs are left out (listed)."""
import sqlite3, statistics, sys, collections
choice = dict(kv.split('=') for kv in sys.argv[1].split(',') if kv)
best = collections.defaultdict(dict)  # (shape, m) -> key -> us
calls = {}
for db in sys.argv[2:]:
    c = sqlite3.connect(db)
    q = """select ce.shape, ce.m, ce.calls, ca.tile, ca.class, ca.vendor, group_concat(s.us) from cell ce
           join candidate ca on ca.cell_id = ce.id join sample s on s.candidate_id = ca.id
           where ca.status = 'ok' and ca.aa = 0 and ce.op = 'gemm_f16' group by ca.id"""
    for sh, m, cl, t, k, v, us in c.execute(q):
        key = t if v else k
        u = statistics.median(float(x) for x in us.split(','))
        calls[sh] = cl
        if u < best[(sh, m)].get(key, 1e9):
            best[(sh, m)][key] = u
ms = sorted({m for _, m in best})
for m in ms:
    tot = collections.Counter()
    for (sh, mm), d in best.items():
        if mm != m:
            continue
        k = choice.get(sh, 'gemm_f16')
        for col, key in (('ours', k), ('plain', 'gemm_f16'), ('cublas', 'cublas'), ('cublaslt', 'cublaslt')):
            tot[col] += calls[sh] * d.get(key, float('nan'))
    print(f"M {m:5d}: ours {tot['ours']/1e3:.3f} ms  plain {tot['plain']/1e3:.3f}  cublas {tot['cublas']/1e3:.3f}  cublaslt {tot['cublaslt']/1e3:.3f}"
          f"  ours/cublas {tot['ours']/tot['cublas']:.3f}  ours/lt {tot['ours']/tot['cublaslt']:.3f}")
