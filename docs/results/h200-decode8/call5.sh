#!/bin/bash
# decode8's fifth H200 call: XA in gemm_decode's constant-weights tiles. Binaries built at the commit
# named in README.md into bin/d8 (tilefit, cuda.test) with unxz.py, pivot.py, h200-decode's table.py,
# the workloads and this script beside them; run from the repository root, carrying bin/d8:
#   bash bin/d8/call5.sh
# Steps: (1) the decode device tests (TestDecode*, WATCHDOG 1); (2) more XA geometries on sq4096 and
# Wout beside the constant-weights picks, 12 rounds; (3) the default decode sweep with --const-weights
# (h200-final12's step 4: every family, fp16 Y) and the tool's copy bandwidth, % of copy per cell.
set -u
B=bin/d8; W=/tmp/d8; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
for b in tilefit cuda.test; do python3 $B/unxz.py $B/$b.xz $W/$b && chmod +x $W/$b; done
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
(cd backend/cuda && TILEFIT_OUT=$o timeout 150 $W/cuda.test -test.run '^TestDecode' -test.v -test.count=1 > $o/dtests.log 2>&1; echo "dtests exit $?" >> $o/dtests.log)
grep -E "^(--- |ok|FAIL|PASS)|exit|differ" $o/dtests.log | head -20; gzip -9 $o/dtests.log; pack dtests
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
D=32_8.tk128.stages16.ksplit16.kw4; C=64_8.tk128.ksplit16.kw2.kc2.lp2
SQ4=$D.lp2.pdl2.xa1,$D.lp2.pdl2.pre1,$D.lp3.pdl2.xa1,$D.lp1.pdl2.xa1,$D.lp2.pdl2.xa1.pre8,$C.stages10.pdl2.xa1,$C.stages8.pdl2.xa1,32_8.tk128.stages12.ksplit16.kw4.lp2.pdl2.xa1,32_4.tk128.stages16.ksplit16.kw4.lp2.pdl2.xa1
T=40_10.tk128.ksplit24.kw2.kc2
WO=$T.lp2.stages8.pdl2.pre4,$T.lp2.stages12.pdl2.xa1,$T.lp2.stages10.pdl2.xa1,$T.lp2.stages12.pdl2.xa1.pre8,$T.lp3.stages12.pdl2.xa1,$T.lp2.stages14.pdl2.xa1.pre8
for s in sq4096:$SQ4 wout:$WO; do
  n=${s%%:*}; tl=${s#*:}
  timeout 90 $t sweep --backend cuda --workload $B/$n.yaml --family gemm_decode --tiles "$(pre $tl)" --out-type f16 --rounds 12 --vendor=false --db $W/xa.db > $o/xa-$n.md 2> $o/xa-$n.err
  echo "$n exit $?"; grep -E "^(ALL|NOT|BATCH)" $o/xa-$n.md; tail -1 $o/xa-$n.err
done
timeout 15 $t devices --backend cuda --measure --db $W/xa.db > $o/devices-xa.txt 2>&1
python3 $B/pivot.py $W/xa.db > $o/pivot-xa.txt 2>&1; cut -c1-120 $o/pivot-xa.txt
cp $W/xa.db $o/; gzip -9 $o/xa.db; pack xa
/usr/bin/time -f "decode wall %e s" timeout 60 $t sweep --backend cuda --workload decode --out-type f16 --const-weights --db $W/dec.db > $o/decode.md 2> $o/decode.err
echo "decode exit $?" >> $o/decode.err
timeout 30 $t devices --backend cuda --measure --db $W/dec.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
python3 $B/table.py $W/dec.db > $o/decode-table.txt 2>&1; cp $W/dec.db $o/dec.db; gzip -9 $o/dec.db
tail -n 2 $o/decode.err; grep -E "^(ALL|NOT|BATCH)" $o/decode.md; cat $o/decode-table.txt | head -24
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
