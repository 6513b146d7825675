#!/usr/bin/env python3
"""Replays the race at its first look (6 pairs) on an exhaustive sweep's samples (every candidate timed
all rounds): at 6 pairs the race's rule ejects a candidate when every pair reads it more than 10%
slower than the leader (the exact signed-rank interval there is the Walsh averages' range); with the
guard g it must also have no sample within (1+g) of the leader's median. Prints the fraction of
samples saved per g and any exhaustive winner the replay would eject.

    python3 race-replay.py full.db   (h200-final8/full.db.gz, gunzipped)
"""
import sqlite3, statistics, sys
db = sqlite3.connect(sys.argv[1])
q = """SELECT c.id, c.shape, c.m, c.reference, k.tile, k.vendor, k.aa, s.round, s.us FROM cell c JOIN candidate k ON k.cell_id=c.id
JOIN sample s ON s.candidate_id=k.id WHERE k.status='ok' ORDER BY c.id, k.pos, s.round"""
cells = {}
for cid, shape, m, ref, tile, vendor, aa, rnd, us in db.execute(q):
    c = cells.setdefault(cid, {"name": f"{shape} M={m}", "ref": ref, "t": {}, "keep": set()})
    c["t"].setdefault(tile + ("~aa" if aa else ""), []).append(us)
    if vendor or aa or tile == ref: c["keep"].add(tile + ("~aa" if aa else ""))
def sim(g, first=6, margin=0.1):
    tot = saved = 0; lost = []
    for cid, c in cells.items():
        T = c["t"]; n = max(len(v) for v in T.values())
        cand = [t for t in T if (t not in c["keep"] or t == c["ref"])]
        best = min(cand, key=lambda t: statistics.median(T[t][:first]))
        bm = statistics.median(T[best][:first])
        fullbest = min([t for t in T if t not in c["keep"] or t == c["ref"]], key=lambda t: statistics.median(T[t]))
        for t, v in T.items():
            tot += n
            if t in c["keep"] or t == best: continue
            r = [v[i] / T[best][i] for i in range(first)]
            if min(r) > 1 + margin and (g is None or min(v[:first]) > (1 + g) * bm):
                saved += n - first
                if t == fullbest: lost.append(c["name"] + " " + t)
    return saved / tot, lost
for g in [None, 0.10, 0.15, 0.2, 0.25, 0.3]:
    f, lost = sim(g)
    print(g, f"saved {f:.3f}", lost)
