#!/bin/bash
# decode3 call 3 (last): GPU tests of gemm_decode; gemm_decode sweeps of more ring/cluster/PDL variants on
# sq4096, sq8192 and Wout (smaller set); then the default decode sweep (every family, the new default tiles); the tool's
# copy bandwidth in the same call; table.py / cells.py of both databases.
set +e
B=bin/decode3; W=/tmp/d3; rm -rf $W; mkdir -p $W/o3; o=$W/o3
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c3.tgz -C $W o3; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
(cd backend/cuda && timeout 30 $W/cuda.test -test.run 'TestDecode' -test.v > $o/test.log 2>&1; echo "test exit $?" >> $o/test.log)
grep -E "^(---|ok|FAIL|PASS)|differ|exit|panic" $o/test.log | head -12; pack test
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
SQ4=32_8.ksplit16.kw4.tk128.stages16.pdl1,32_8.ksplit16.kw4.tk128.stages16.pdl2,32_8.ksplit16.kw4.tk64.stages16.pdl1,32_8.ksplit16.kw4.tk64.stages16.pdl2,64_8.ksplit16.kw2.kc2.tk128.stages8.pdl2,32_8.ksplit16.kw4.tk128.stages12.pdl1
SQ8=64_4.tk128.stages8.pdl1,64_4.tk128.stages8.pdl2,64_4.tk64.stages16.pdl1,64_4.tk128.stages6.pdl1,64_4.pdl2
WO=40_2.ksplit24.kw2.kc2.tk128.stages8.pdl1,40_2.ksplit24.kw2.kc2.tk64.stages16.pdl1,40_2.ksplit24.kw2.kc2.tk128.stages10.pdl1,32_4.ksplit24.kw4.tk128.stages16.pdl1,40_2.ksplit24.kw2.kc2.tk128.stages8.pdl2,40_2.ksplit24.kw2.kc2.tk64.stages16.pdl2
sweep() { # name workload tiles
  /usr/bin/time -f "$1 wall %e s" timeout 15 $t sweep --backend cuda --workload $2 --family gemm_decode \
    --tiles "$3" --out-type f16 --rounds 12 --db $W/d3.db > $o/$1.md 2> $o/$1.err
  echo "$1 exit $?" >> $o/$1.err; tail -3 $o/$1.err; head -3 $o/$1.md
}
/usr/bin/time -f "default wall %e s" timeout 30 $t sweep --backend cuda --workload decode --out-type f16 --rounds 12 --db $W/def.db > $o/default.md 2> $o/default.err
echo "default exit $?" >> $o/default.err; tail -4 $o/default.err; head -3 $o/default.md; pack default
timeout 10 $t devices --backend cuda --measure --db $W/def.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
sweep sq4096 $B/sq4096.yaml "$(pre $SQ4)"; pack sq4096
sweep sq8192 $B/sq8192.yaml "$(pre $SQ8)"; pack sq8192
sweep wout $B/wout.yaml "$(pre $WO)"; pack wout
timeout 10 $t devices --backend cuda --measure --db $W/d3.db > $o/devices-d3.txt 2>&1; echo "devices exit $?" >> $o/devices-d3.txt
python3 $B/table.py $W/d3.db > $o/table-d3.txt 2>&1; python3 $B/cells.py $W/d3.db > $o/cells-d3.txt 2>&1
python3 $B/table.py $W/def.db > $o/table-default.txt 2>&1; python3 $B/cells.py $W/def.db > $o/cells-default.txt 2>&1
cat $o/table-default.txt $o/table-d3.txt; grep -E "gemm_decode .* ok" $o/cells-d3.txt | awk '{print $1,$2,$4,$6,$7}'
cp $W/d3.db $W/def.db $o/; gzip -9 $o/d3.db $o/def.db
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
