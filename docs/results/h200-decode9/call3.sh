#!/bin/bash
# decode9's third H200 call: gemm_decode RV 1 (the cluster's partials in the fragments' order, two floats
# a remote store) beside its twins. Binaries built at the commit named in README.md into bin/d9 (tilefit,
# cuda.test) with unxz.py, pivot.py, the workloads and this script beside them; run from the repository
# root, carrying bin/d9:  bash bin/d9/call3.sh
# Steps: (1) the cluster device tests (TestDecodeCluster*, WATCHDOG 1, the RV cases among them); (2) RV
# tiles on sq4096 and Wout beside their twins, 12 rounds, twice (rv1.db, rv2.db), each with the tool's
# copy bandwidth.
set -u
B=bin/d9; W=/tmp/d9; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
for b in tilefit cuda.test; do python3 $B/unxz.py $B/$b.xz $W/$b && chmod +x $W/$b; done
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
(cd backend/cuda && TILEFIT_OUT=$o timeout 150 $W/cuda.test -test.run '^TestDecodeCluster|^TestDecodeSplitCases' -test.v -test.count=1 > $o/dtests.log 2>&1; echo "dtests exit $?" >> $o/dtests.log)
grep -E "^(--- |ok|FAIL|PASS)|exit|differ|panic" $o/dtests.log | head -20; gzip -9 $o/dtests.log; pack dtests
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
SQ4=32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.xa1.er1,64_8.tk128.stages10.pdl2.ksplit16.kw2.kc2.lp2.xa1.er1,64_8.tk128.stages10.pdl2.ksplit16.kw2.kc2.lp2.xa1.er1.rv1,64_8.tk128.stages8.pdl2.ksplit16.kw2.kc2.lp2.xa1.er1.rv1,64_8.tk128.stages10.pdl1.ksplit16.kw2.kc2.lp2,64_8.tk128.stages10.pdl1.ksplit16.kw2.kc2.lp2.rv1
WO=40_10.tk128.stages12.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1,40_10.tk128.stages12.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1.rv1,40_10.tk128.stages8.pdl2.ksplit24.kw2.kc2.lp2.pre4,40_10.tk128.stages8.pdl2.ksplit24.kw2.kc2.lp2.rv1.pre4,40_10.tk128.stages8.pdl1.ksplit24.kw2.kc2.lp2,40_10.tk128.stages8.pdl1.ksplit24.kw2.kc2.lp2.rv1
for r in 1 2; do
for s in sq4096:$SQ4 wout:$WO; do
  n=${s%%:*}; tl=${s#*:}
  timeout 100 $t sweep --backend cuda --workload $B/$n.yaml --family gemm_decode --tiles "$(pre $tl)" --out-type f16 --rounds 12 --vendor=false --db $W/rv$r.db > $o/rv$r-$n.md 2> $o/rv$r-$n.err
  echo "$n exit $? t=$(el)"; grep -E "^(ALL|NOT|BATCH)" $o/rv$r-$n.md; tail -1 $o/rv$r-$n.err
done
timeout 15 $t devices --backend cuda --measure --db $W/rv$r.db > $o/devices-rv$r.txt 2>&1
python3 $B/pivot.py $W/rv$r.db > $o/pivot-rv$r.txt 2>&1; cut -c1-130 $o/pivot-rv$r.txt
cp $W/rv$r.db $o/; gzip -9 $o/rv$r.db; pack rv$r
done
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
