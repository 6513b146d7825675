#!/bin/bash
# decode9's second H200 call: gemm_decode ER 1 (a stage released before the warp waits for its
# next one), with XA, XS and plain PDL 1 and 2 tiles beside their twins. Binaries built at the commit named in README.md into
# bin/d9 (tilefit, cuda.test) with unxz.py, pivot.py, wpre.py, the workloads, the torch anchor and this
# script beside them; run from the repository root, carrying bin/d9:  bash bin/d9/call2.sh
# Steps: (1) the decode device tests (TestDecode*, WATCHDOG 1, the ER cases among them); (2) ER tiles on
# sq4096, Wout and sq8192 beside their twins, 12 rounds, twice (er1.db, er2.db), each with the tool's copy bandwidth.
set -u
export PYTHONUNBUFFERED=1
B=bin/d9; W=/tmp/d9; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
for b in tilefit cuda.test; do python3 $B/unxz.py $B/$b.xz $W/$b && chmod +x $W/$b; done
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
(cd backend/cuda && TILEFIT_OUT=$o timeout 200 $W/cuda.test -test.run '^TestDecode' -test.v -test.count=1 > $o/dtests.log 2>&1; echo "dtests exit $?" >> $o/dtests.log)
grep -E "^(--- |ok|FAIL|PASS)|exit|differ|panic" $o/dtests.log | head -20; gzip -9 $o/dtests.log; pack dtests
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
SQ4=32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.xa1,32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.xa1.er1,32_8.tk128.stages16.pdl1.ksplit16.kw4.lp2,32_8.tk128.stages16.pdl1.ksplit16.kw4.lp2.er1,32_8.tk128.stages20.pdl2.ksplit16.kw4.lp2.xs2.er1,32_8.tk128.stages20.pdl2.ksplit16.kw4.lp2.xs3.er1,32_8.tk128.stages24.pdl2.ksplit16.kw2.lp2.xs2.er1,64_8.tk128.stages10.pdl2.ksplit16.kw2.kc2.lp2.xa1.er1,64_8.tk128.stages12.pdl2.ksplit16.kw2.kc2.lp2.xs2.er1,32_8.tk256.stages8.pdl2.ksplit16.kw4.lp2.xa1.er1,32_8.tk128.stages12.pdl2.ksplit16.kw4.lp2.xa1.er1
WO=40_10.tk128.stages12.pdl2.ksplit24.kw2.kc2.lp2.xa1,40_10.tk128.stages12.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1,40_10.tk128.stages8.pdl2.ksplit24.kw2.kc2.lp2.pre4,40_10.tk128.stages8.pdl2.ksplit24.kw2.kc2.lp2.pre4.er1,40_10.tk128.stages8.pdl1.ksplit24.kw2.kc2.lp2,40_10.tk128.stages8.pdl1.ksplit24.kw2.kc2.lp2.er1,40_10.tk128.stages18.pdl2.ksplit24.kw2.kc2.lp2.xs3.er1,40_10.tk128.stages18.pdl2.ksplit24.kw2.kc2.lp2.xs2.er1,40_10.tk128.stages14.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1
S8=64_4.tk128.stages8.pdl2.lp2,64_4.tk128.stages8.pdl2.lp2.er1,64_4.tk128.stages8.pdl1.lp2,64_4.tk128.stages8.pdl1.lp2.er1
for r in 1 2; do
for s in sq4096:$SQ4 wout:$WO sq8192:$S8; do
  n=${s%%:*}; tl=${s#*:}
  timeout 100 $t sweep --backend cuda --workload $B/$n.yaml --family gemm_decode --tiles "$(pre $tl)" --out-type f16 --rounds 12 --vendor=false --db $W/er$r.db > $o/er$r-$n.md 2> $o/er$r-$n.err
  echo "$n exit $? t=$(el)"; grep -E "^(ALL|NOT|BATCH)" $o/er$r-$n.md; tail -1 $o/er$r-$n.err
done
timeout 15 $t devices --backend cuda --measure --db $W/er$r.db > $o/devices-er$r.txt 2>&1
python3 $B/pivot.py $W/er$r.db > $o/pivot-er$r.txt 2>&1; cut -c1-130 $o/pivot-er$r.txt
cp $W/er$r.db $o/; gzip -9 $o/er$r.db; pack er$r
done
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
