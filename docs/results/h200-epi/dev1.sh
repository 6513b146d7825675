#!/bin/bash
# Call 1 of the epi branch (build: see README.md). Run from the repository root: bash bin/epi/dev1.sh
# Small sweeps of the EPI 1 (staged epilogue) tiles beside the tiles they would replace, in paired
# rounds (the first tile listed is each cell's reference), vendors timed; then the device tests.
set -u
B=bin/epi; W=/tmp/epi; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/r.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
G=128_128_2.pingpong1,128_128_2.pingpong1.epi1,128_128_2.pingpong1.mc1,128_128_2.pingpong1.mc1.epi1,64_160_2.pingpong1,64_160_2.pingpong1.epi1,64_160_2.pingpong1.mc1,64_160_2.pingpong1.mc1.epi1,128_160_2,128_160_2.epi1,128_256_2,128_256_2.epi1,128_256_2.mc1.epi1,128_192_2.epi1,256_128_2.epi1,128_128_2.epi1,64_96_2.pingpong1.pdl1.epi1,128_96_2.pingpong1.epi1,64_160_1.epi1
timeout 60 $t sweep --backend cuda --workload $B/g.yaml --out-type f16 --family gemm_wgmma --tiles $G --db $W/g.db > $o/g.md 2> $o/g.err; echo "gemm exit $?" >> $o/g.err
tail -3 $o/g.err; grep -E "^(ALL|NOT|BATCH)" $o/g.md; pack gemm
H=128_160_2,128_160_2.epi1,128_128_2.pingpong1,128_128_2.pingpong1.epi1,128_160_2.hbuf2.hpre1.epi1,128_160_2.pdl1.epi1,128_128_2.epi1,64_160_1.epi1
timeout 20 $t sweep --backend cuda --workload strata --m 512,1024,2048 --out-type f16 --family hc_up_wgmma --tiles $H --db $W/h.db > $o/h.md 2> $o/h.err; echo "hc_up exit $?" >> $o/h.err
tail -2 $o/h.err; grep -E "^(ALL|NOT|BATCH)" $o/h.md; pack hc_up
S=128_160_2.pdl1,128_160_2.pdl1.epi1,128_160_2.epi1,128_80_2.pdl1,128_80_2.pdl1.epi1,128_128_2.pdl1.epi1,64_80_1.pdl1.epi1
timeout 20 $t sweep --backend cuda --workload strata --m 1983,2048 --out-type f16 --family swiglu_wgmma --tiles $S --db $W/s.db > $o/s.md 2> $o/s.err; echo "swiglu exit $?" >> $o/s.err
tail -2 $o/s.err; grep -E "^(ALL|NOT|BATCH)" $o/s.md; pack swiglu
( cd backend/cuda && TILEFIT_OUT=$o timeout 45 $W/cuda.test -test.v -test.timeout 42s -test.run 'TestWgmmaThroughPlan|TestHopperFused' > $o/tests.log 2>&1; echo "tests exit $?" >> $o/tests.log )
grep -E "^(--- |ok|FAIL|PASS|tests exit)|DIFFER|differ" $o/tests.log | head -20; pack tests
