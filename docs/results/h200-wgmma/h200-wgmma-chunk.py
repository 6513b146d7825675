import sqlite3, re, statistics, collections, sys
def load(db):
    c = sqlite3.connect(db)
    med = {}
    for cid, us in c.execute("select candidate_id, us from sample"):
        med.setdefault(cid, []).append(us)
    out = collections.defaultdict(dict); calls = {}
    for shape, m, ncalls, tile, status, cid, vendor in c.execute("select cell.shape, cell.m, cell.calls, candidate.tile, candidate.status, candidate.id, candidate.vendor from candidate join cell on cell.id=candidate.cell_id"):
        calls[shape] = ncalls
        if status != 'ok' or cid not in med: continue
        v = statistics.median([x for x in med[cid] if x is not None])
        k = 'vendor' if vendor else ('splitk%d' % (int(re.search(r'ksplit(\d+)', tile).group(1))*64) if 'ksplit' in tile else 'gemm_f16')
        if k not in out[(shape, m)] or v < out[(shape, m)][k][0]:
            out[(shape, m)][k] = (v, tile)
    return out, calls
strata, calls = load(sys.argv[1]); skinny, _ = load(sys.argv[2])
choice = {'hc_read': 'splitk2560', 'Walbe': 'splitk640', 'Wsg': 'splitk640', 'Wik': 'splitk640'}
ms = [256, 512, 1024, 1983, 2048]
print("| M | cuBLAS ms/chunk | gemm_f16 class only | cublas/best | with split-K classes (hc_read 2560, Wik/Walbe/Wsg 640) | cublas/best |")
print("|---:|---:|---:|---:|---:|---:|")
for m in ms:
    cb = b1 = b2 = 0
    for s, n in calls.items():
        src = skinny if (s, m) in skinny else strata
        cell = src[(s, m)]
        cb += n * cell['vendor'][0]
        b1 += n * cell['gemm_f16'][0]
        b2 += n * cell[choice.get(s, 'gemm_f16')][0]
    print("| %d | %.2f | %.2f | %.3f | %.2f | %.3f |" % (m, cb/1000, b1/1000, cb/b1, b2/1000, cb/b2))
for s in calls:
    k = choice.get(s, 'gemm_f16')
    src = [skinny if (s, m) in skinny else strata for m in ms]
    print(s, k, ' '.join('%.2f' % (src[i][(s, m)][k][0] / src[i][(s, m)]['vendor'][0]) for i, m in enumerate(ms)), ' '.join(src[i][(s, m)][k][1] for i, m in enumerate(ms)))
