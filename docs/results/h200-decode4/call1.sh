#!/bin/bash
# decode4 call 1: the GPU tests of gemm_decode (PF, XM, LD tiles among them); gemm_decode sweeps of
# L2-prefetch (PF), min(M,16)-row X box (XM) and late-trigger (LD) variants on sq4096, Wout, sq8192,
# the current default of each shape first (the comparison); the tool's copy bandwidth in the same call.
set +e
B=bin/decode4; W=/tmp/d4; rm -rf $W; mkdir -p $W/o1; o=$W/o1
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c1.tgz -C $W o1; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
(cd backend/cuda && timeout 70 $W/cuda.test -test.run 'TestDecode' -test.v > $o/test.log 2>&1; echo "test exit $?" >> $o/test.log)
grep -E "^(---|ok|FAIL|PASS)|differ|exit|panic|error" $o/test.log | head -20; pack test
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
SQ4=32_8.ksplit16.kw4.tk128.stages16.pdl1,32_8.ksplit16.kw4.tk128.stages16.pdl1.pf64,32_8.ksplit16.kw4.tk128.stages16.pdl1.pf64.xm1,32_8.ksplit16.kw4.tk128.stages16.pdl1.xm1,32_8.ksplit16.kw4.tk128.stages16.pdl1.pf16.xm1,32_8.ksplit16.kw4.tk128.stages8.pdl1.pf64.ld1,32_8.ksplit16.kw4.tk128.stages8.pdl1.pf64.xm1.ld1,32_8.ksplit16.kw4.tk128.stages8.pdl1.pf64.xm1,32_8.ksplit16.kw4.tk64.stages8.pdl1.pf64.xm1.ld1,32_8.ksplit16.kw4.tk128.stages16.pdl2.pf64.xm1
WO=40_2.ksplit24.kw2.kc2.tk128.stages8.pdl1,40_2.ksplit24.kw2.kc2.tk128.stages8.pdl1.pf64,40_2.ksplit24.kw2.kc2.tk128.stages8.pdl1.pf64.xm1,40_2.ksplit24.kw2.kc2.tk128.stages6.pdl1.pf64.xm1.ld1,40_2.ksplit24.kw2.kc2.tk128.stages6.pdl1.pf64.xm1,40_4.ksplit8.kw4.kc3.tk64.stages8.pdl1.pf64.xm1,40_4.ksplit8.kw4.kc3.tk64.stages8.pdl1.pf64.xm1.ld1,48_4.ksplit24.kw2.kc2.tk128.stages8.pdl1.pf64.xm1,40_2.ksplit24.kw2.kc2.tk128.stages8.pdl2.pf64.xm1,40_2.ksplit24.kw2.kc2.tk128.stages12.pdl1.pf64.xm1
SQ8=64_4.tk128.stages8.pdl1,64_4.tk128.stages8.pdl1.pf16,64_4.tk128.stages8.pdl1.pf32.xm1,64_4.tk128.stages8.pdl1.xm1,64_4.tk128.stages8.pdl1.pf128.xm1,32_8.ksplit16.kw4.tk128.stages16.pdl1.pf32.xm1
sweep() { # name workload tiles
  /usr/bin/time -f "$1 wall %e s" timeout 40 $t sweep --backend cuda --workload $2 --family gemm_decode \
    --tiles "$3" --out-type f16 --rounds 12 --vendor=false --db $W/d1.db > $o/$1.md 2> $o/$1.err
  echo "$1 exit $?" >> $o/$1.err; tail -3 $o/$1.err; grep -E "BITWISE|INVARIANT|fail" $o/$1.md | head -4
}
sweep sq4096 $B/sq4096.yaml "$(pre $SQ4)"; pack sq4096
sweep wout $B/wout.yaml "$(pre $WO)"; pack wout
sweep sq8192 $B/sq8192.yaml "$(pre $SQ8)"; pack sq8192
timeout 15 $t devices --backend cuda --measure --db $W/d1.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
python3 $B/table.py $W/d1.db > $o/table.txt 2>&1; python3 $B/tiles.py $W/d1.db > $o/tiles.txt 2>&1
cat $o/tiles.txt
cp $W/d1.db $o/; gzip -9 $o/d1.db
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
