#!/bin/bash
# decode5 call 2: WARPS 16 — the split-K device tests (bitwise equal to gemm_wgmma's class reference, M 1 = row 0),
# then one paired gemm_decode sweep on sq4096: the default against 32_16 / 64_16 variants; copy_gbps in the same call.
set +e
B=bin/decode5; W=/tmp/d5; rm -rf $W; mkdir -p $W/o; o=$W/o
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
(cd backend/cuda && timeout 100 $W/cuda.test -test.run 'TestDecodeSplit|TestDecodeCluster' -test.v > $o/test.log 2>&1; echo "test exit $?" >> $o/test.log)
grep -E "^(---|ok|FAIL|PASS)|differ|exit|panic|rror" $o/test.log | head -20
S=32_8.ksplit16.kw4.tk128.stages16.pdl1.lp2
X=32_16.ksplit16.kw4.tk128
TL=$S,$X.stages16.pdl1.lp2,$X.stages8.pdl1.lp2,$X.stages16.pdl2.lp2,64_16.ksplit16.kw4.tk128.stages8.pdl1.lp2
TL=$(echo $TL | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -)
timeout 60 $t sweep --backend cuda --workload $B/sq4096.yaml --family gemm_decode --tiles "$TL" --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/sq4096.md 2> $o/sq4096.err
echo "sweep exit $?" >> $o/sq4096.err; tail -3 $o/sq4096.err
timeout 15 $t devices --backend cuda --measure --db $W/d.db > $o/devices.txt 2>&1
grep copy_gbps $o/devices.txt; grep -E "^\| sq4096 \| 4096 \| 4096 \|" $o/sq4096.md | cut -c1-200
tar czf $OUT/c2.tgz -C $W o
