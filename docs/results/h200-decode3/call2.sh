#!/bin/bash
# decode3 call 2 (last): GPU tests of gemm_decode; gemm_decode sweeps of more ring/cluster/PDL variants on
# sq4096, sq8192 and Wout; then the default decode sweep (every family, the new default tiles); the tool's
# copy bandwidth in the same call; table.py / cells.py of both databases.
set +e
B=bin/decode3; W=/tmp/d3; rm -rf $W; mkdir -p $W/o2; o=$W/o2
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c2.tgz -C $W o2; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
(cd backend/cuda && timeout 60 $W/cuda.test -test.run 'TestDecode' -test.v > $o/test.log 2>&1; echo "test exit $?" >> $o/test.log)
grep -E "^(---|ok|FAIL|PASS)|differ|exit|panic" $o/test.log | head -12; pack test
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
SQ4=32_8.ksplit16.kw4.stages8.pdl1,32_8.stages8.ksplit16.kw4,32_8.ksplit16.kw4.stages8.pdl2,64_8.ksplit16.kw2.kc2.tk128.stages8.pdl1,64_8.ksplit16.kw2.kc2.tk128.stages8.pdl2,128_4.ksplit16.kc4.tk64.stages10.pdl1,64_4.ksplit16.kw2.kc2.tk128.stages10.pdl1,64_4.ksplit16.kw2.kc2.tk128.stages10.pdl2,64_4,64_4.pdl1,64_4.pdl2,32_8.ksplit16.kw4.tk128.stages16.pdl1
SQ8=64_4,64_4.pdl1,64_4.tk128.stages8.pdl1,64_4.pdl2,64_8.pdl1,32_8.ksplit16.kw4.stages8.pdl1,64_8.ksplit16.kw2.tk128.stages8.pdl1,64_8.ksplit16.kw2.tk128.stages8.pdl2,64_8.ksplit16.kw2.kc2.tk128.stages8.pdl1,32_8.ksplit16.kw4.tk128.stages16.pdl1
WO=40_2.ksplit24.kw2.kc2.tk128.stages8.pdl1,32_4.stages8.ksplit24.kw4,40_2.ksplit24.kw2.kc2.tk128.stages8.pdl2,40_2.ksplit24.kw2.kc2.tk128.stages8,40_2.ksplit24.kw2.kc2.tk128.stages12.pdl1,40_2.ksplit24.kw2.kc2.tk128.stages14.pdl1,40_2.ksplit24.kw2.kc2.tk256.stages6.pdl1,80_2.ksplit24.kc4.tk128.stages8.pdl1,80_2.ksplit24.kc4.tk128.stages8.pdl2,80_2.ksplit24.kc4.tk128.stages6.pdl1,40_2.ksplit8.kw2.kc2.tk128.stages8.pdl1,32_4.ksplit24.kw4.stages8.pdl1,40_2.ksplit24.kw2.kc2.tk128.stages14.pdl2,80_2.ksplit24.kc4.tk256.stages4.pdl1,64_4.pdl1
sweep() { # name workload tiles
  /usr/bin/time -f "$1 wall %e s" timeout 60 $t sweep --backend cuda --workload $2 --family gemm_decode \
    --tiles "$3" --out-type f16 --rounds 12 --db $W/d2.db > $o/$1.md 2> $o/$1.err
  echo "$1 exit $?" >> $o/$1.err; tail -3 $o/$1.err; head -3 $o/$1.md
}
sweep sq4096 $B/sq4096.yaml "$(pre $SQ4)"; pack sq4096
sweep sq8192 $B/sq8192.yaml "$(pre $SQ8)"; pack sq8192
sweep wout $B/wout.yaml "$(pre $WO)"; pack wout
/usr/bin/time -f "default wall %e s" timeout 90 $t sweep --backend cuda --workload decode --out-type f16 --rounds 12 --db $W/def.db > $o/default.md 2> $o/default.err
echo "default exit $?" >> $o/default.err; tail -4 $o/default.err; head -3 $o/default.md; pack default
timeout 30 $t devices --backend cuda --measure --db $W/def.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
timeout 30 $t devices --backend cuda --measure --db $W/d2.db > $o/devices-d2.txt 2>&1; echo "devices exit $?" >> $o/devices-d2.txt
python3 $B/table.py $W/d2.db > $o/table-d2.txt 2>&1; python3 $B/cells.py $W/d2.db > $o/cells-d2.txt 2>&1
python3 $B/table.py $W/def.db > $o/table-default.txt 2>&1; python3 $B/cells.py $W/def.db > $o/cells-default.txt 2>&1
cat $o/table-default.txt $o/table-d2.txt; grep -E "gemm_decode .* ok" $o/cells-d2.txt | awk '{print $1,$2,$4,$6,$7}'
cp $W/d2.db $W/def.db $o/; gzip -9 $o/d2.db $o/def.db
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
