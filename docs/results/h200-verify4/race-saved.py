#!/usr/bin/env python3
"""Candidates that left the race and timing samples saved, per database (a cell's full count is its
largest candidate's sample count).

    python3 race-saved.py a.db b.db
"""
import sqlite3, sys
for path in sys.argv[1:]:
    db = sqlite3.connect(path)
    rows = db.execute("""SELECT c.id, k.left_at, COUNT(s.round) FROM cell c JOIN candidate k ON k.cell_id=c.id
      LEFT JOIN sample s ON s.candidate_id=k.id WHERE k.status='ok' GROUP BY k.id""").fetchall()
    full = {}
    for cid, left, n in rows: full[cid] = max(full.get(cid, 0), n)
    tot = sum(full[c] for c, _, _ in rows); got = sum(n for _, _, n in rows)
    left = sum(1 for _, l, _ in rows if l)
    print(f"{path}: {left} candidates left the race; {tot-got} of {tot} timing samples saved ({100*(tot-got)/tot:.1f}%)")
