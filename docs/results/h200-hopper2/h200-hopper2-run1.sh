#!/bin/bash
# hopper2 run 1 (issue 10 items 4, 2, 6): gemm_stream (swap-AB mma.sync for
# small M), new gemm_wgmma BN values at M 256, PDL. Run from the repository
# root on the GPU machine with bin/hopper2 carried; everything lands in $OUT.
set -u
W=/tmp/h2; rm -rf $W; mkdir -p $W
B=bin/hopper2
t=$B/tilefit
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} TILEFIT_CUDA_CACHE=/tmp/tfcache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > $W/smi.txt 2>&1
T0=$(date +%s)
pack() { tar czf $OUT/run1.tgz -C $W . ; }
$t devices --db $W/decode.db > $W/devices.txt 2>&1; echo "devices rc=$? $(( $(date +%s) - T0 ))s"; grep -iE "copy|tflop" $W/devices.txt | head -3
# 1. GPU tests: gemm_stream bitwise = gemm_f16's reference (tails, unaligned K, M in y, prefix rows); PDL split-K.
timeout 100 $B/cuda.test -test.run 'TestStreamThroughPlan$|TestPDLSplitK$' -test.v > $W/test.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^(--- |ok|FAIL|PASS)|differ|rror" $W/test.log | head -20 | cut -c1-300
pack
S=gemm_stream
# 2. smoke (tails: N 1, K 100/136/520/1000, M 1/37/130) with gemm_stream beside the reference.
timeout 60 $t sweep --backend cuda --workload smoke --aa=false --rounds 6 --tiles "128_128_4,$S/32_8_2,$S/16_8_1,$S/64_16_4,$S/32_32_2,$S/32_8_2.tk32.stages2,$S/64_8_4.pdl1" --db $W/smoke.db > $W/smoke.md 2> $W/smoke.err; echo "smoke rc=$? $(( $(date +%s) - T0 ))s"
grep -iE "bitwise|failed" $W/smoke.md | head -5
pack
# 3. decode: M 1, 8, 16 on 4096x4096 and up.
DT="128_128_4,gemm_wgmma/64_128_1"
for x in 16_8_1 32_8_1 32_8_2 64_8_2 64_8_4 128_8_8 16_8_1.stages16 32_8_2.stages16 64_8_4.stages12 16_16_1 32_16_2 64_16_4 32_8_2.pdl1 16_8_1.pdl1 64_8_4.stages12.pdl1; do DT="$DT,$S/$x"; done
timeout 120 $t sweep --backend cuda --workload $B/decode.yaml --aa=false --rounds 8 --tiles "$DT" --db $W/decode.db > $W/decode.md 2> $W/decode.err; echo "decode rc=$? $(( $(date +%s) - T0 ))s"
grep -iE "bitwise|failed" $W/decode.md | head -5
pack
# 4. strata at M 256: previous winners, new BN (16..96), PDL, split-K with PDL, gemm_stream for skinny N.
G=gemm_wgmma
ST="128_128_4"
for x in 64_48_1 128_160_2 64_192_2.pingpong1 64_128_1 64_128_2.pingpong1 128_48_2 64_160_1 64_16_1 64_24_1 64_32_1 64_80_1 64_96_1 64_80_2.pingpong1 128_80_2 64_48_1.pdl1 64_80_1.pdl1 64_16_1.pdl1 64_192_2.pingpong1.pdl1 64_48_1.ksplit10 64_48_1.ksplit10.pdl1 64_128_1.ksplit40 64_128_1.ksplit40.pdl1 64_16_1.ksplit40; do ST="$ST,$G/$x"; done
for x in 16_8_1 16_16_1 32_8_2 32_16_2 32_32_2 64_32_4 16_8_1.pdl1; do ST="$ST,$S/$x"; done
timeout 150 $t sweep --backend cuda --workload strata --m 256 --aa=false --rounds 8 --tiles "$ST" --db $W/m256.db > $W/m256.md 2> $W/m256.err; echo "m256 rc=$? $(( $(date +%s) - T0 ))s"
grep -iE "bitwise|failed|chunk" $W/m256.md | head -8
pack
