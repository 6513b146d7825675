import sqlite3, sys, statistics
c=sqlite3.connect(sys.argv[1])
shape=sys.argv[2]; ms=[int(x) for x in sys.argv[3].split(',')]; pat=sys.argv[4] if len(sys.argv)>4 else ''
for m in ms:
    rows=[]
    for cid,tile in c.execute("select c.id, c.tile from candidate c join cell e on c.cell_id=e.id where e.shape=? and e.m=?", (shape,m)):
        us=[r[0] for r in c.execute("select us from sample where candidate_id=? and us is not null",(cid,))]
        if us and pat in tile: rows.append((statistics.median(us), tile, len(us)))
    rows.sort()
    print(shape, m, ' | '.join(f"{t} {u:.2f}({n})" for u,t,n in rows[:int(sys.argv[5]) if len(sys.argv)>5 else 8]))
