#!/bin/bash
# decode3 call 1: GPU tests of gemm_decode (plain, split, cluster KC>1), then two sweeps (fp16 Y,
# cuBLAS + cuBLASLt in the same rounds): sq4096+sq8192 and Wout with PDL 2 / small-ring / cluster tiles;
# the tool's copy bandwidth in the same call.
set +e
B=bin/decode3; W=/tmp/d3; rm -rf $W; mkdir -p $W/o1; o=$W/o1
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c1.tgz -C $W o1; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
(cd backend/cuda && timeout 60 $W/cuda.test -test.run 'TestDecode(Through|SplitThrough|ClusterThrough)' -test.v > $o/test.log 2>&1; echo "test exit $?" >> $o/test.log)
grep -E "^(---|ok|FAIL|PASS)|differ|exit|panic" $o/test.log | head -12; pack test
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
SQ=32_8.stages8.ksplit16.kw4,32_8.ksplit16.kw4.stages8.pdl1,32_8.ksplit16.kw4.stages8.pdl2,32_8.ksplit16.kw4.tk128.stages8.pdl1,32_8.ksplit16.kw4.tk128.stages8.pdl2,32_4.ksplit8.kw4.tk64.stages8.pdl2,32_8.ksplit8.kw8.tk64.stages16.pdl1,64_8.ksplit16.kw2.kc2.tk128.stages4.pdl2,64_8.ksplit16.kw2.kc2.tk128.stages4,64_4,64_4.pdl2,64_4.tk128.stages4.pdl2,64_4.tk128.stages4.pdl1
WO=32_4.stages8.ksplit24.kw4,32_4.ksplit24.kw4.stages8.pdl2,32_4.ksplit24.kw4.tk128.stages8.pdl2,40_2.ksplit8.kw2.kc2.tk128.stages4,40_2.ksplit8.kw2.kc2.tk128.stages4.pdl1,40_2.ksplit8.kw2.kc2.tk128.stages4.pdl2,40_2.ksplit24.kw2.kc2.tk128.stages4.pdl2,40_2.ksplit24.kw2.kc2.tk128.stages4,64_8.ksplit8.kw4.kc3.tk64.stages8.pdl2,80_2.ksplit8.kc4.tk128.stages4.pdl2,40_2.ksplit8.kw2.kc2.tk256.stages4.pdl2,64_4,64_4.pdl2,40_2.ksplit24.kw2.kc2.tk128.stages6.pdl2,40_2.ksplit8.kw2.kc2.tk128.stages6.pdl2,40_2.ksplit24.kw2.kc2.tk128.stages8.pdl2
sweep() { # name workload tiles
  /usr/bin/time -f "$1 wall %e s" timeout 90 $t sweep --backend cuda --workload $2 --family gemm_decode \
    --tiles "$3" --out-type f16 --rounds 12 --db $W/d1.db > $o/$1.md 2> $o/$1.err
  echo "$1 exit $?" >> $o/$1.err; tail -3 $o/$1.err; head -3 $o/$1.md
}
sweep sq $B/sq.yaml "$(pre $SQ)"; pack sq
sweep wout $B/wout.yaml "$(pre $WO)"; pack wout
timeout 30 $t devices --backend cuda --measure --db $W/d1.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
python3 $B/table.py $W/d1.db > $o/table.txt 2>&1; python3 $B/cells.py $W/d1.db > $o/cells.txt 2>&1
cat $o/table.txt; grep -v "^$" $o/cells.txt | head -120
cp $W/d1.db $o/; gzip -9 $o/d1.db
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
