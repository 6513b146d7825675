#!/bin/bash
# decode4 call 2 (last): the GPU tests of gemm_decode; the default decode sweep (every family, cuBLAS
# and cuBLASLt, the defaults with two new candidates: 32_8…lp2.xm1, 40_10…kc2); gemm_decode sweeps of W's L2 promotion (LP),
# the pre-wait-only L2 prefetch (PF ≤ STAGES), prefetch.global.L2 (PG), XM, PDL 2, co-resident late-trigger
# (LD), 64-CTA grids (each call on about half the SMs, the next beside it) and ten-warp 40_10 cluster variants on
# sq4096, Wout, sq8192, each shape's current default first; the tool's
# copy bandwidth in the same call.
set +e
B=bin/decode4; W=/tmp/d4; rm -rf $W; mkdir -p $W/o2; o=$W/o2
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c2.tgz -C $W o2; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
(cd backend/cuda && timeout 70 $W/cuda.test -test.run 'TestDecode' -test.v > $o/test.log 2>&1; echo "test exit $?" >> $o/test.log)
grep -E "^(---|ok|FAIL|PASS)|differ|exit|panic|error" $o/test.log | head -20; pack test
/usr/bin/time -f "default wall %e s" timeout 40 $t sweep --backend cuda --workload decode --out-type f16 --rounds 12 --db $W/def.db > $o/default.md 2> $o/default.err
echo "default exit $?" >> $o/default.err; tail -3 $o/default.err; grep -E "BITWISE|INVARIANT" $o/default.md | head -2; pack default
timeout 15 $t devices --backend cuda --measure --db $W/def.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
S=32_8.ksplit16.kw4.tk128.stages16
R=64_8.ksplit16.kw4.tk128.stages8
SQ4=$S.pdl1,$S.pdl1.lp2,$S.pdl1.lp0,$S.pdl1.xm1,$S.pdl1.lp2.xm1,$S.pdl1.pf16,$S.pdl2,$S.pdl2.lp2.xm1,$S.pdl1.pg16,$S.pdl1.pg32,$S.pdl2.pg32,32_8.ksplit16.kw4.tk128.stages8.pdl2.ld1.lp2,$R.pdl2,$R.pdl1,$R.pdl2.pg32,64_8.ksplit16.kw2.kc2.tk128.stages8.pdl2,32_8.ksplit16.kw4.tk256.stages8.pdl1
V=40_2.ksplit24.kw2.kc2.tk128.stages8
T=40_10.ksplit24.kw2.kc2.tk128.stages8
U=40_4.ksplit24.kw4.tk128.stages12
WO=$V.pdl1,$V.pdl1.lp2,$V.pdl1.lp0,$V.pdl1.lp2.xm1,$V.pdl1.pf8,$V.pdl2,$V.pdl2.lp2.xm1,$V.pdl1.pg16,$V.pdl2.pg24,$T.pdl1,$T.pdl1.lp2,$T.pdl2,$T.pdl1.pg16,$T.pdl2.pg24.xm1,$U.pdl2,$U.pdl2.pg32,40_2.ksplit24.kw2.kc2.tk128.stages6.pdl2.ld1.lp2
P=64_4.tk128.stages8
SQ8=$P.pdl1,$P.pdl1.lp2,$P.pdl1.lp0,$P.pdl1.pf8,$P.pdl2,$P.pdl2.lp2,$P.pdl1.pg16,$P.pdl1.pg32,$P.pdl2.pg16
sweep() { # name workload tiles
  /usr/bin/time -f "$1 wall %e s" timeout 40 $t sweep --backend cuda --workload $2 --family gemm_decode \
    --tiles "$3" --out-type f16 --rounds 12 --vendor=false --db $W/d2.db > $o/$1.md 2> $o/$1.err
  echo "$1 exit $?" >> $o/$1.err; tail -2 $o/$1.err; grep -E "BITWISE|INVARIANT|fail" $o/$1.md | head -2
}
sweep sq4096 $B/sq4096.yaml "$(pre $SQ4)"; pack sq4096
sweep wout $B/wout.yaml "$(pre $WO)"; pack wout
sweep sq8192 $B/sq8192.yaml "$(pre $SQ8)"; pack sq8192
timeout 15 $t devices --backend cuda --measure --db $W/d2.db > $o/devices-d2.txt 2>&1; echo "devices exit $?" >> $o/devices-d2.txt
python3 $B/table.py $W/def.db > $o/table-default.txt 2>&1; python3 $B/tiles.py $W/def.db > $o/tiles-default.txt 2>&1
python3 $B/table.py $W/d2.db > $o/table-d2.txt 2>&1; python3 $B/tiles.py $W/d2.db > $o/tiles-d2.txt 2>&1
cat $o/table-default.txt; cat $o/tiles-d2.txt | cut -c1-110
cp $W/d2.db $W/def.db $o/; gzip -9 $o/d2.db $o/def.db
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
