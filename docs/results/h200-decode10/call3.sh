#!/bin/bash
# decode10's third H200 call: MB 8 with ldmatrix.x4 for X's A registers (4bf6d07) beside the
# constant-weights picks and call 2's MB 8 tiles. Binaries built at the commit named in README.md into bin/d10 (tilefit, cuda.test)
# with unxz.py, pivot.py, the workloads and this script beside them; run from the repository root,
# carrying bin/d10:  bash bin/d10/call3.sh
# Steps: (1) the decode device tests (WATCHDOG 1, the MB cases among them); (2) MB 8 tiles on sq4096,
# Wout and sq8192 beside the constant-weights picks, 12 rounds, twice (l1.db, l2.db), each with the
# tool's copy bandwidth; (3) below.
set -u
B=bin/d10; W=/tmp/d10; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
for b in tilefit cuda.test; do python3 $B/unxz.py $B/$b.xz $W/$b && chmod +x $W/$b; done
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
(cd backend/cuda && TILEFIT_OUT=$o timeout 200 $W/cuda.test -test.run '^TestDecode' -test.v -test.count=1 > $o/dtests.log 2>&1; echo "dtests exit $?" >> $o/dtests.log)
grep -E "^(--- |ok|FAIL|PASS)|exit|differ|panic" $o/dtests.log | head -30; gzip -9 $o/dtests.log; pack dtests
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
S=tk128.stages
SQ4=32_8.${S}16.pdl2.ksplit16.kw4.lp2.xa1.er1,32_8.${S}20.pdl2.ksplit16.kw4.lp2.xa1.er1.mb8,32_8.${S}16.pdl2.ksplit16.kw4.lp2.xa1.er1.mb8,64_8.${S}10.pdl2.ksplit16.kw2.kc2.lp2.xa1.er1.rv1,64_8.${S}10.pdl2.ksplit16.kw2.kc2.lp2.xa1.er1.rv1.mb8
WO=40_10.${S}12.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1,40_10.${S}12.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1.mb8,40_10.${S}8.pdl2.ksplit24.kw2.kc2.lp2.rv1.pre4.mb8
S8=64_4.${S}8.pdl2.lp2,64_4.${S}8.pdl2.lp2.mb8,64_4.${S}12.pdl2.lp2.mb8
for r in 1 2; do
for s in sq4096:$SQ4 wout:$WO sq8192:$S8; do
  n=${s%%:*}; tl=${s#*:}
  timeout 120 $t sweep --backend cuda --workload $B/$n.yaml --family gemm_decode --tiles "$(pre $tl)" --out-type f16 --rounds 12 --vendor=false --db $W/l$r.db > $o/l$r-$n.md 2> $o/l$r-$n.err
  echo "$n exit $? t=$(el)"; grep -E "^(ALL|NOT|BATCH)" $o/l$r-$n.md; tail -1 $o/l$r-$n.err
done
timeout 15 $t devices --backend cuda --measure --db $W/l$r.db > $o/devices-l$r.txt 2>&1
python3 $B/pivot.py $W/l$r.db > $o/pivot-l$r.txt 2>&1; cut -c1-150 $o/pivot-l$r.txt
cp $W/l$r.db $o/; gzip -9 $o/l$r.db; pack l$r
done
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
# (3) the default decode sweep with --const-weights (every family, fp16 Y), with the MB 8 tile among
# gemm_decode's constant-weights tiles, and the tool's copy bandwidth (table.py is h200-decode's).
/usr/bin/time -f "decode wall %e s" timeout 90 $t sweep --backend cuda --workload decode --out-type f16 --const-weights --db $W/dec.db > $o/decode.md 2> $o/decode.err
echo "decode exit $?" >> $o/decode.err
timeout 30 $t devices --backend cuda --measure --db $W/dec.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
python3 $B/table.py $W/dec.db > $o/decode-table.txt 2>&1; cp $W/dec.db $o/dec.db; gzip -9 $o/dec.db
tail -n 2 $o/decode.err; grep -E "^(ALL|NOT|BATCH)" $o/decode.md; head -14 $o/decode-table.txt
echo "done t=$(el)s"; pack decode
