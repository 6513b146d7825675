# sass_top.py CSV [N]: the SASS instructions of an ncu source page (--page source --csv --print-source sass)
# with the most warp-stall samples, each with its top stall reasons, and the total per reason.
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
n = int(sys.argv[2]) if len(sys.argv) > 2 else 25
hi = next(i for i, r in enumerate(rows) if 'Address' in r and 'Source' in r)
h = rows[hi]; data = [r for r in rows[hi + 1:] if len(r) == len(h)]
ix = {k: i for i, k in enumerate(h)}
S = ix['Warp Stall Sampling (All Samples)']
reasons = [k for k in h if k.startswith('stall_') and '(Not Issued)' not in k]
num = lambda x: float(x.replace(',', '')) if x.strip() not in ('', '-') else 0.0
tot = sum(num(r[S]) for r in data)
per = collections.Counter()
for r in data:
    for k in reasons: per[k] += num(r[ix[k]])
print("total samples %.0f over %d instructions" % (tot, len(data)))
print("by reason:", ", ".join("%s %.1f%%" % (k[6:], 100 * v / tot) for k, v in per.most_common(8)))
for pos, r in sorted(enumerate(data), key=lambda pr: -num(pr[1][S]))[:n]:
    top = sorted(((num(r[ix[k]]), k[6:]) for k in reasons), reverse=True)[:3]
    print("%5.1f%%  #%-4d %-6s %-60s %s" % (100 * num(r[S]) / tot, pos, r[ix['Address']][-5:], r[ix['Source']][:60], ", ".join("%s %.0f" % (k, v) for v, k in top if v)))
