#!/bin/bash
# decode6 call 3: XG (X's A fragments loaded by the consumers; the ring holds W alone, and under PDL 2 a preloaded
# stage completes on its W): paired gemm_decode sweeps against the defaults and the old PDL 2, copy_gbps in the
# same call, then the decode device tests (XG cases included).
set +e
B=bin/decode6; W=/tmp/d6; rm -rf $W; mkdir -p $W/o; o=$W/o
python3 $B/unxz.py $B/tilefit.xz $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
python3 $B/unxz.py $B/cuda.test.xz $W/cuda.test && chmod +x $W/cuda.test
nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.mem,temperature.gpu --format=csv > $o/env.txt 2>&1
tl() { echo "$@" | tr ' ' '\n' | sed "s|^|gemm_decode/|;s|$|.lp2|" | paste -sd, -; }
SQ=$(tl 32_8.ksplit16.kw4.tk128.stages16.pdl1 32_8.ksplit16.kw4.tk128.stages16.pdl2 32_8.ksplit16.kw4.tk128.stages16.pdl1.xg1 32_8.ksplit16.kw4.tk128.stages16.pdl1.xg2 \
  32_8.ksplit16.kw4.tk128.stages16.pdl2.xg1 32_8.ksplit16.kw4.tk128.stages16.pdl2.xg2 32_8.ksplit16.kw4.tk256.stages12.pdl2.xg1 32_8.ksplit16.kw4.tk256.stages12.pdl2.xg2 \
  32_8.ksplit16.kw4.tk256.stages12.pdl1.xg1 64_8.ksplit16.kw2.kc2.tk128.stages12.pdl2.xg1 64_8.ksplit16.kw2.kc2.tk128.stages8.pdl2)
WO=$(tl 40_10.ksplit24.kw2.kc2.tk128.stages8.pdl1 40_10.ksplit24.kw2.kc2.tk128.stages8.pdl1.xg1 40_10.ksplit24.kw2.kc2.tk128.stages16.pdl1.xg1 40_10.ksplit24.kw2.kc2.tk128.stages16.pdl2.xg1 \
  40_10.ksplit24.kw2.kc2.tk128.stages16.pdl2.xg2 40_10.ksplit24.kw2.kc2.tk256.stages10.pdl2.xg1 40_10.ksplit24.kw2.kc2.tk256.stages10.pdl2.xg2 40_10.ksplit24.kw2.kc2.tk128.stages8.pdl2)
S8=$(tl 64_4.tk128.stages8.pdl1 64_4.tk128.stages8.pdl2 64_4.tk128.stages12.pdl2.xg1 64_4.tk128.stages12.pdl1.xg1 64_4.tk128.stages12.pdl2.xg2)
timeout 90 $t sweep --backend cuda --workload $B/sq4096.yaml --family gemm_decode --tiles "$SQ" --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/sq4096.md 2> $o/sq4096.err; echo "sweep exit $?" >> $o/sq4096.err
timeout 60 $t sweep --backend cuda --workload $B/wout.yaml --family gemm_decode --tiles "$WO" --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/wout.md 2> $o/wout.err; echo "sweep exit $?" >> $o/wout.err
timeout 60 $t sweep --backend cuda --workload $B/sq8192.yaml --family gemm_decode --tiles "$S8" --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/sq8192.md 2> $o/sq8192.err; echo "sweep exit $?" >> $o/sq8192.err
timeout 20 $t devices --backend cuda --measure --db $W/d.db > $o/devices.txt 2>&1
python3 $B/pivot.py $W/d.db > $o/pivot.txt 2>&1
for f in sq4096 wout sq8192; do tail -n 2 $o/$f.err; done; grep copy_gbps $o/devices.txt; grep -ihE "^\*\*.*(bitwise|invariant)|fail" $o/*.md | head -8
cat $o/pivot.txt
(cd backend/cuda && timeout 200 $W/cuda.test -test.run 'TestDecode' -test.v > $o/test.log 2>&1; echo "test exit $?" >> $o/test.log)
grep -E "^(--- |ok|FAIL|PASS)|differ|exit|panic|rror" $o/test.log | head -20
cp $o/pivot.txt $o/test.log $OUT/
tar czf $OUT/c3.tgz -C $W o
