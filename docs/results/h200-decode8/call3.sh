#!/bin/bash
# decode8's third H200 call: gemm_decode XA (PDL 2's preloaded stages get their X boxes by cp.async
# after the wait, not by TMA behind the preloaded W). Binaries built at the commit named in
# README.md into bin/d8 (tilefit, cuda.test) with unxz.py, pivot.py, the workloads and this script
# beside them; run from the repository root, carrying bin/d8:  bash bin/d8/call3.sh
# Steps: (1) the decode device tests (TestDecode*, WATCHDOG 1, XA cases included); (2) sq4096, Wout
# and sq8192 sweeps, each shape's current pick, its PDL 1 / PDL 2 twins and the XA tiles, 12 rounds,
# twice (two databases); (3) the tool's copy bandwidth into both.
set -u
B=bin/d8; W=/tmp/d8; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
for b in tilefit cuda.test; do python3 $B/unxz.py $B/$b.xz $W/$b && chmod +x $W/$b; done
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
(cd backend/cuda && TILEFIT_OUT=$o timeout 150 $W/cuda.test -test.run '^TestDecode' -test.v -test.count=1 > $o/dtests.log 2>&1; echo "dtests exit $?" >> $o/dtests.log)
grep -E "^(--- |ok|FAIL|PASS)|exit|differ" $o/dtests.log | head -20; gzip -9 $o/dtests.log; pack dtests
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
D=32_8.tk128.stages16.ksplit16.kw4.lp2; C=64_8.tk128.stages10.ksplit16.kw2.kc2.lp2; E=32_8.stages8.ksplit16.kw4.lp2
SQ4=$D.pdl1,$D.pdl2.pre1,$D.pdl2,$D.pdl2.xa1,$D.pdl2.pre4.xa1,$D.pdl2.pre8.xa1,$E.pdl2,$E.pdl2.xa1,$C.pdl2,$C.pdl2.xa1
T=40_10.tk128.ksplit24.kw2.kc2.lp2
WO=$T.stages8.pdl1,$T.stages8.pdl2.pre4,$T.stages8.pdl2,$T.stages8.pdl2.xa1,$T.stages8.pdl2.pre4.xa1,$T.stages12.pdl2.xa1,$T.stages14.pdl2.xa1
P=64_4.tk128.lp2
SQ8=$P.stages8.pdl1,$P.stages8.pdl2,$P.stages8.pdl2.xa1,$P.stages10.pdl2.xa1
for r in 1 2; do
  for s in sq4096:$SQ4 wout:$WO sq8192:$SQ8; do
    n=${s%%:*}; tl=${s#*:}
    timeout 90 $t sweep --backend cuda --workload $B/$n.yaml --family gemm_decode --tiles "$(pre $tl)" --out-type f16 --rounds 12 --vendor=false --db $W/dec$r.db > $o/$r-$n.md 2> $o/$r-$n.err
    echo "$r $n exit $?"; grep -E "^(ALL|NOT|BATCH)" $o/$r-$n.md; tail -1 $o/$r-$n.err
  done
done
for r in 1 2; do
  timeout 15 $t devices --backend cuda --measure --db $W/dec$r.db > $o/devices$r.txt 2>&1
  python3 $B/pivot.py $W/dec$r.db > $o/pivot$r.txt 2>&1; cut -c1-120 $o/pivot$r.txt
  cp $W/dec$r.db $o/; gzip -9 $o/dec$r.db
done
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
