#!/usr/bin/env python3
"""Where the race run's own-median chunk differs from the exhaustive run's (h200-final9).

    python3 drift.py race.db full.db

Per M: the cells whose best tile (by each run's own medians) is the same tile in both runs, and
the chunk part of those cells in each run — their ratio is the two runs' drift with the choice
held fixed, which no race rule can cause; then the cells where the picks differ, priced both ways.
"""
import sqlite3
import statistics
import sys


def cells(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = {}
    q = """SELECT c.shape, c.m, c.calls, k.tile, s.us FROM cell c JOIN candidate k ON k.cell_id = c.id
           JOIN sample s ON s.candidate_id = k.id WHERE k.vendor = 0 AND k.aa = 0 AND k.status = 'ok'"""
    for shape, m, calls, tile, us in db.execute(q):
        out.setdefault((shape, m), [calls, {}])[1].setdefault(tile, []).append(us)
    return out


def pick(ts):
    t = min(ts, key=lambda t: statistics.median(ts[t]))
    return t, statistics.median(ts[t])


race, full = cells(sys.argv[1]), cells(sys.argv[2])
for m in sorted({k[1] for k in race}):
    same_r = same_f = diff_r = diff_f = 0.0
    nsame = ndiff = 0
    moved = []
    for key, (calls, ts) in race.items():
        if key[1] != m or key not in full:
            continue
        rt, rus = pick(ts)
        ft, fus = pick(full[key][1])
        if rt == ft:
            same_r += calls * rus / 1000
            same_f += calls * fus / 1000
            nsame += 1
        else:
            diff_r += calls * rus / 1000
            diff_f += calls * fus / 1000
            ndiff += 1
            moved.append(f"{key[0]}: race {rt} {rus:.2f}, exhaustive {ft} {fus:.2f}")
    print(f"M={m}: {nsame} cells same pick, chunk part race {same_r:.3f} ms / exhaustive {same_f:.3f} ms "
          f"(drift {same_r / same_f:.4f}); {ndiff} cells other pick, race {diff_r:.3f} / exhaustive {diff_f:.3f} ms")
    for line in moved:
        print("   ", line)
