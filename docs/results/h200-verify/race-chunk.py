#!/usr/bin/env python3
"""Does the race change the chunk? (issue 17)

Compares a sweep with the race (tilefit sweep, default) and an exhaustive
one (tilefit sweep --race=false: every verified candidate timed all rounds)
of the same workload and candidates. Per M, the chunk (sum of calls x
median us of the best tile per cell):
  own:   each sweep's best tiles by its own medians (what each reports; the
         target: the race's within 1% of the exhaustive's);
  cross: the race's picks priced in the exhaustive sweep's samples (biased
         against the race: the exhaustive minimum is the lowest of many
         noisy medians).
Lists every cell whose exhaustive winner left the race (the real risk),
and counts the candidates that left and the timing samples saved. Exit 1
when an own-chunk ratio exceeds 1.01 or a winner left the race.

    python3 docs/results/h200-verify/race-chunk.py race.db exhaustive.db
"""
import sqlite3
import statistics
import sys


def cells(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = {}
    q = """SELECT c.id, c.shape, c.n, c.k, c.m, c.calls, k.tile, k.left_at, s.us
           FROM cell c JOIN candidate k ON k.cell_id = c.id JOIN sample s ON s.candidate_id = k.id
           WHERE k.vendor = 0 AND k.aa = 0 AND k.status = 'ok'"""
    for cid, shape, n, k, m, calls, tile, left, us in db.execute(q):
        cell = out.setdefault((shape, n, k, m), {"calls": calls, "tiles": {}, "left": {}})
        cell["tiles"].setdefault(tile, []).append(us)
        cell["left"][tile] = left
    db.close()
    return out


race, full = cells(sys.argv[1]), cells(sys.argv[2])
bad = False
left = samples = saved = 0
per_m = {}
for key in sorted(set(race) & set(full)):
    r, f = race[key], full[key]
    fm = {t: statistics.median(v) for t, v in f["tiles"].items()}
    own = {t: statistics.median(v) for t, v in r["tiles"].items() if not r["left"].get(t)}
    if not fm or not own:
        continue
    best_full = min(fm, key=fm.get)
    best_race = min(own, key=own.get)
    m = key[3]
    a, b, c = per_m.get(m, (0.0, 0.0, 0.0))
    per_m[m] = (a + f["calls"] * fm[best_full], b + f["calls"] * own[best_race], c + f["calls"] * fm.get(best_race, fm[best_full]))
    full_n = max(len(v) for v in r["tiles"].values())
    for t, v in r["tiles"].items():
        samples += len(v)
        if r["left"].get(t):
            left += 1
            saved += full_n - len(v)
    if r["left"].get(best_full):
        bad = True
        print(f"{key[0]} M={m}: the exhaustive winner {best_full} left the race after {r['left'][best_full]} pairs")
for m in sorted(per_m):
    a, b, c = per_m[m]
    bad = bad or b / a > 1.01
    print(f"M={m}: chunk (own medians) exhaustive {a / 1000:.3f} ms, race {b / 1000:.3f} ms (ratio {b / a:.4f}); race picks in the exhaustive samples {c / 1000:.3f} ms ({c / a:.4f})")
print(f"{left} candidates left the race; {saved} of {samples + saved} timing samples saved ({100 * saved / max(samples + saved, 1):.0f}%)")
sys.exit(1 if bad or not per_m else 0)
