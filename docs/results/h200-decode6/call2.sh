#!/bin/bash
# decode6 call 2: the read ceiling again with pdl 3 (preload the ring, then wait: gemm_decode's PDL 2 without X),
# then paired gemm_decode sweeps of tiles whose geometry the read ceiling favours (existing parameter values),
# copy_gbps in the same call, then the decode device tests.
set +e
B=bin/decode6; W=/tmp/d6; rm -rf $W; mkdir -p $W/o; o=$W/o
python3 $B/unxz.py $B/tilefit.xz $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
python3 $B/unxz.py $B/cuda.test.xz $W/cuda.test && chmod +x $W/cuda.test
nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.mem,temperature.gpu --format=csv > $o/env.txt 2>&1
(cd backend/cuda && timeout 60 $W/cuda.test -test.run 'TestReadCeiling' -test.v > $o/ceiling.log 2>&1; echo "exit $?" >> $o/ceiling.log)
grep -E "^(---|ok|FAIL|PASS|exit)|summed|rror|panic" $o/ceiling.log | head -10
python3 $B/top.py $o/ceiling.log > $o/top.txt 2>&1
tl() { echo "$@" | tr ' ' '\n' | sed "s|^|gemm_decode/|;s|$|.lp2|" | paste -sd, -; }
SQ=$(tl 32_8.ksplit16.kw4.tk128.stages16.pdl1 32_8.ksplit16.kw4.tk256.stages8.pdl1 32_8.ksplit16.kw4.tk256.stages8.pdl2 32_8.ksplit16.kw4.tk128.stages8.pdl2 \
  32_8.ksplit16.kw2.kc2.tk128.stages8.pdl1 32_8.ksplit16.kw2.kc2.tk256.stages4.pdl1 32_8.ksplit16.kw2.kc2.tk128.stages8.pdl2 \
  16_4.ksplit16.kw4.tk128.stages8.pdl1 16_8.ksplit16.kw4.tk128.stages8.pdl1 8_4.ksplit16.kw4.tk128.stages8.pdl1 \
  128_16.ksplit16.kc4.tk64.stages10.pdl1 128_16.ksplit16.kc4.tk128.stages4.pdl1 64_8.ksplit16.kw2.kc2.tk128.stages8.pdl1 64_8.ksplit16.kw2.kc2.tk128.stages8.pdl2)
WO=$(tl 40_10.ksplit24.kw2.kc2.tk128.stages8.pdl1 40_10.ksplit24.kw2.kc2.tk256.stages4.pdl1 40_10.ksplit24.kw2.kc2.tk128.stages8.pdl2 40_10.ksplit24.kw2.kc2.tk128.stages4.pdl2 \
  80_10.ksplit24.kc4.tk128.stages8.pdl1 80_10.ksplit24.kc4.tk64.stages12.pdl1 40_5.ksplit24.kc2.tk128.stages8.pdl1 40_5.ksplit24.kc4.tk128.stages6.pdl1)
S8=$(tl 64_4.tk128.stages8.pdl1 64_4.tk128.stages8.pdl2)
timeout 90 $t sweep --backend cuda --workload $B/sq4096.yaml --family gemm_decode --tiles "$SQ" --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/sq4096.md 2> $o/sq4096.err; echo "sweep exit $?" >> $o/sq4096.err
timeout 60 $t sweep --backend cuda --workload $B/wout.yaml --family gemm_decode --tiles "$WO" --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/wout.md 2> $o/wout.err; echo "sweep exit $?" >> $o/wout.err
timeout 40 $t sweep --backend cuda --workload $B/sq8192.yaml --family gemm_decode --tiles "$S8" --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/sq8192.md 2> $o/sq8192.err; echo "sweep exit $?" >> $o/sq8192.err
timeout 20 $t devices --backend cuda --measure --db $W/d.db > $o/devices.txt 2>&1
python3 $B/pivot.py $W/d.db > $o/pivot.txt 2>&1
tail -2 $o/sq4096.err $o/wout.err $o/sq8192.err; grep copy_gbps $o/devices.txt; grep -iE "bitwise|invariant" $o/*.md | head -6
cat $o/pivot.txt
grep -A12 "one_256MiB" $o/top.txt | head -3; grep -E "pdl3" $o/ceiling.log | sed 's/.*ceiling_read_test.go:[0-9]*: //' | sort -t' ' -k1,1 | head -80 > $o/pdl3.txt
(cd backend/cuda && timeout 150 $W/cuda.test -test.run 'TestDecode' -test.v > $o/test.log 2>&1; echo "test exit $?" >> $o/test.log)
grep -E "^(--- |ok|FAIL|PASS)|differ|exit|panic" $o/test.log | head -20
cp $o/ceiling.log $o/top.txt $o/pivot.txt $o/test.log $OUT/
tar czf $OUT/c2.tgz -C $W o
