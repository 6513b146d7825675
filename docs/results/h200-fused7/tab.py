# tab.py DB: the median µs per call of every candidate of every cell of a tilefit database, one row per
# tile, one column per M (the fastest per column in bold, † where not bitwise equal to the cell's
# reference). Run on the gunzipped databases of this folder: python3 tab.py c2-hc.db
import sqlite3, sys, statistics as st
db = sys.argv[1]
c = sqlite3.connect(db)
cells = c.execute("select id, shape, m from cell order by shape, m").fetchall()
ms = sorted(set(m for _, _, m in cells))
tiles = {}
for cid, shape, m in cells:
    for cand, tile, fam, aa, status, bw, vendor, res in c.execute("select id, tile, family, aa, status, bitwise, vendor, resources from candidate where cell_id=? order by pos", (cid,)):
        us = [r[0] for r in c.execute("select us from sample where candidate_id=? and us is not null", (cand,))]
        name = tile  # stored as the sweep names it: FAMILY/TILE for a family other than the first, ~aa for the A/A twin
        tiles.setdefault(name, {})[m] = (st.median(us) if us else float('nan'), len(us), status, bw)
print("| tile | " + " | ".join("M %d" % m for m in ms) + " |")
print("|---|" + "---:|" * len(ms))
best = {m: min(v[m][0] for v in tiles.values() if m in v) for m in ms}
for name in tiles:
    row = tiles[name]
    cellv = []
    for m in ms:
        if m not in row: cellv.append(""); continue
        v = row[m][0]; s = "%.2f" % v
        if v == best[m]: s = "**" + s + "**"
        if not row[m][3]: s += "†"
        cellv.append(s)
    print("| `%s` | " % name + " | ".join(cellv) + " |")
print("samples/tile:", {n: [row[m][1] for m in row] for n, row in list(tiles.items())[:2]})
print("status:", set(v[2] for row in tiles.values() for v in row.values()))
