#!/usr/bin/env python3
"""Compare the output bits of two tilefit databases swept with the same seed.

Every verified candidate stores one 64-bit hash per output row
(candidate_rows -> row_hashes). Two sweeps of the same workload and seed
feed the same inputs, so a tile whose kernel computes the same bits has the
same row-hash lists in both. Prints, over the (shape, M, tile) present in
both (vendors left out), how many are equal and which differ.

    python3 docs/results/same-bits.py A.sqlite B.sqlite
"""
import sqlite3
import sys


def rows(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    q = """SELECT c.shape, c.m, k.tile, r.operand, h.digest
           FROM cell c JOIN candidate k ON k.cell_id = c.id
           JOIN candidate_rows r ON r.candidate_id = k.id
           JOIN row_hashes h ON h.id = r.rows_id
           WHERE k.vendor = 0 AND k.aa = 0"""
    out = {}
    for shape, m, tile, operand, digest in db.execute(q):
        out.setdefault((shape, m, tile), []).append((operand, digest))
    db.close()
    return {k: sorted(v) for k, v in out.items()}


a, b = rows(sys.argv[1]), rows(sys.argv[2])
common = sorted(set(a) & set(b))
diff = [k for k in common if a[k] != b[k]]
print(f"{len(common)} (shape, M, tile) in both; {len(common) - len(diff)} with equal row hashes; {len(diff)} differ")
for k in diff[:20]:
    print("differs:", *k)
sys.exit(1 if diff or not common else 0)
