#!/usr/bin/env python3
"""Counts, in a raced sweep, the candidates the guard kept in: timed to the end though every one of
their first six pairs read them more than 10% slower than the 6-pair leader (the rule alone would have
ejected them, approximately: the rule's interval at six pairs is the Walsh averages' range).

    python3 race-guard.py race.db
"""
import sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
q = """SELECT c.id, c.shape, c.m, k.tile, k.vendor, k.aa, k.left_at, s.round, s.us FROM cell c JOIN candidate k ON k.cell_id=c.id
JOIN sample s ON s.candidate_id=k.id WHERE k.status='ok' ORDER BY c.id, k.pos, s.round"""
cells = {}
for cid, shape, m, tile, vendor, aa, left, rnd, us in db.execute(q):
    c = cells.setdefault(cid, {"name": f"{shape} M={m}", "t": {}, "keep": set(), "left": {}})
    key = tile + ("~aa" if aa else "")
    c["t"].setdefault(key, []).append(us); c["left"][key] = left
    if vendor or aa: c["keep"].add(key)
spared = 0; ex = []
for cid, c in cells.items():
    T = c["t"]; cand = [t for t in T if t not in c["keep"]]
    best = min(cand, key=lambda t: statistics.median(T[t][:6])); bm = statistics.median(T[best][:6])
    for t in cand:
        if t == best or c["left"][t]: continue
        if len(T[t]) >= 6 and all(T[t][i] / T[best][i] > 1.1 for i in range(6)):
            spared += 1; ex.append((c["name"], t, round(min(T[t][:6]) / bm, 3), round(statistics.median(T[t]) / statistics.median(T[best]), 3)))
print("spared by the guard (kept in though every pair read them >10% slower at 6 pairs):", spared)
import collections
fast_later = [e for e in ex if e[3] < 1.1]
print("of them with a 12-round median within 10% of the 6-pair leader's:", len(fast_later))
for e in fast_later[:10]: print("  ", e)
