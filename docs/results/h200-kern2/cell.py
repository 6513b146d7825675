#!/usr/bin/env python3
"""cell.py DB SHAPE M [N]: every ok tile of one cell, fastest first (median µs, class, samples)."""
import sqlite3, statistics, sys
c = sqlite3.connect(sys.argv[1])
q = """select ca.tile, ca.class, group_concat(s.us) from cell ce join candidate ca on ca.cell_id = ce.id
       join sample s on s.candidate_id = ca.id where ce.shape = ? and ce.m = ? and ca.status = 'ok' and ca.aa = 0 group by ca.id"""
r = sorted((statistics.median(float(x) for x in us.split(',')), t, k, len(us.split(','))) for t, k, us in c.execute(q, (sys.argv[2], int(sys.argv[3]))))
for us, t, k, n in r[: int(sys.argv[4]) if len(sys.argv) > 4 else 99]:
    print(f"{us:8.2f} {t:40s} {k} n={n}")
