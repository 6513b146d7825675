# region.py CSV: warp-stall samples of an ncu SASS source page summed by region of the kernel: the
# consumers' stage-full waits (the try_wait on the k loop's full barrier and its retry), the wgmma
# waits (WARPGROUP.DEPBAR), the H wait (try_wait on hfull, aux+0x60 in these kernels' layout), the
# epilogue (from the last DEPBAR to the consumer's loop branch), the producer, the rest.
import csv, sys, re
rows = list(csv.reader(open(sys.argv[1])))
hi = next(i for i, r in enumerate(rows) if 'Address' in r and 'Source' in r)
h = rows[hi]; d = [r for r in rows[hi + 1:] if len(r) == len(h)]
S = h.index('Warp Stall Sampling (All Samples)')
n = lambda r: float(r[S] or 0)
tot = sum(n(r) for r in d)
src = [r[1] for r in d]
reg = {}
def add(k, v): reg[k] = reg.get(k, 0) + v
i = 0
while i < len(d):
    s = src[i]
    if 'TRYWAIT' in s:
        # the try_wait and the branch that retries it (the next predicated BRA)
        j = i + 1
        while j < len(d) and 'BRA' not in src[j]: j += 1
        bar = re.search(r'\[(.*?)\]', s).group(1)
        kind = 'H wait (hfull)' if '0x60' in bar or '0x68' in bar else ('xempty' if '0x80' in bar else 'mbarrier waits (stage full / empty)')
        add(kind, sum(n(d[k]) for k in range(i, j + 1))); i = j + 1; continue
    if 'WARPGROUP.DEPBAR' in s: add('wgmma waits (DEPBAR)', n(d[i]))
    elif 'HGMMA' in s or 'WARPGROUP.ARRIVE' in s: add('wgmma issue', n(d[i]))
    elif 'UTMALDG' in s or 'ELECT' in s or 'BRA.U.ANY' in s: add('TMA issue', n(d[i]))
    elif 'STG' in s: add('global stores', n(d[i]))
    elif 'LDS' in s: add('shared loads (H)', n(d[i]))
    elif i < 5: add('kernel start', n(d[i]))
    else: add('other', n(d[i]))
    i += 1
print("%s: %.0f samples" % (sys.argv[1], tot))
for k, v in sorted(reg.items(), key=lambda kv: -kv[1]): print("  %-40s %5.1f%%" % (k, 100 * v / tot))
