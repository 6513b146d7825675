#!/bin/bash
# hopper2 run 3: gemm_stream with the lean loader (per-thread shared offsets
# computed once, no predicates for interior chunks, ldmatrix offsets per k16
# step precomputed) against the run-1 source (bin/hopper2/old_stream.cu via
# --source), on small M and the skinny strata shapes at M 256.
set -u
W=/tmp/h2; rm -rf $W; mkdir -p $W
B=bin/hopper2
t=$B/tilefit
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} TILEFIT_CUDA_CACHE=/tmp/tfcache
T0=$(date +%s)
pack() { tar czf $OUT/run3.tgz -C $W . ; }
timeout 40 $B/cuda.test -test.run 'TestStreamThroughPlan$' -test.v > $W/test.log 2>&1; echo "test rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^(--- |ok|FAIL|PASS)|differ|rror" $W/test.log | head -6 | cut -c1-300
S=gemm_stream
NEW="128_128_4,gemm_wgmma/64_8_1.swap1.pdl1"; for x in 32_8_2 16_8_1 64_8_4 32_8_2.tk128 32_16_2 16_16_1; do NEW="$NEW,$S/$x"; done
timeout 45 $t sweep --backend cuda --workload $B/ab.yaml --aa=false --rounds 8 --tiles "$NEW" --db $W/new.db > $W/new.md 2> $W/new.err; echo "new rc=$? $(( $(date +%s) - T0 ))s"
grep -iE "bitwise|failed" $W/new.md | head -2 | cut -c1-300
pack
timeout 40 $t sweep --backend cuda --workload $B/ab.yaml --aa=false --rounds 8 --family gemm_stream --source $B/old_stream.cu --tiles "32_8_2,16_8_1,64_8_4,32_8_2.tk128,32_16_2" --db $W/old.db > $W/old.md 2> $W/old.err; echo "old rc=$? $(( $(date +%s) - T0 ))s"
pack
SK="128_128_4,gemm_wgmma/64_24_1.pdl1,gemm_wgmma/64_24_1.ksplit10.pdl1"; for x in 32_8_2 16_8_1 64_8_4 32_16_2 16_16_1 32_32_2; do SK="$SK,$S/$x"; done
timeout 40 $t sweep --backend cuda --workload $B/skinny256.yaml --aa=false --rounds 8 --tiles "$SK" --db $W/skinny.db > $W/skinny.md 2> $W/skinny.err; echo "skinny rc=$? $(( $(date +%s) - T0 ))s"
grep -iE "bitwise|failed" $W/skinny.md | head -2 | cut -c1-300
pack
