#!/bin/bash
# hopper2 run 2: gemm_wgmma SWAP (small M through wgmma), gemm_stream TK 128,
# ncu stall reasons of both on 4096x4096 M 1, M 256 winners again. Run from
# the repository root on the GPU machine with bin/hopper2 carried.
set -u
W=/tmp/h2; rm -rf $W; mkdir -p $W
B=bin/hopper2
t=$B/tilefit
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} TILEFIT_CUDA_CACHE=/tmp/tfcache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > $W/smi.txt 2>&1
T0=$(date +%s)
pack() { tar czf $OUT/run2.tgz -C $W . ; }
$t devices --db $W/decode.db > $W/devices.txt 2>&1; echo "devices rc=$? $(( $(date +%s) - T0 ))s"; grep -iE "copy|tflop" $W/devices.txt | head -3
# 1. GPU test: SWAP bitwise = gemm_f16's reference (tails, M 1, fp16 Y), swapped split-K = unswapped.
timeout 60 $B/cuda.test -test.run 'TestWgmmaSwapThroughPlan$' -test.v > $W/test.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 ))s"
grep -E "^(--- |ok|FAIL|PASS)|differ|rror" $W/test.log | head -10 | cut -c1-300
pack
S=gemm_stream; G=gemm_wgmma
# 2. decode again with the new candidates.
DT="128_128_4"
for x in 32_8_2 16_8_1 64_8_4 32_8_2.tk128 16_8_1.tk128 64_8_4.tk128 32_16_2.tk128 64_16_4.tk128 32_8_2.stages16 32_8_2.tk128.stages6 32_16_2; do DT="$DT,$S/$x"; done
for x in 64_8_1.swap1 64_16_1.swap1 64_8_1.swap1.pdl1 128_8_2.swap1 64_8_1.swap1.stages8 64_16_1.swap1.pdl1; do DT="$DT,$G/$x"; done
timeout 100 $t sweep --backend cuda --workload $B/decode.yaml --aa=false --rounds 8 --tiles "$DT" --db $W/decode.db > $W/decode.md 2> $W/decode.err; echo "decode rc=$? $(( $(date +%s) - T0 ))s"
grep -iE "bitwise|failed" $W/decode.md | head -3 | cut -c1-400
pack
# 3. ncu: stall reasons on 4096x4096 M 1.
printf 'name: one\nm: [1]\nshapes:\n  - {name: sq4096, n: 4096, k: 4096, calls: 1}\n' > $W/one.yaml
for v in "$S/32_8_2:tilefit_gemm_stream" "$G/64_8_1.swap1:tilefit_gemm_wgmma"; do
  tile=${v%%:*}; kern=${v##*:}; f=$W/ncu-$(echo $tile | tr '/.' '__').txt
  timeout 45 ncu --clock-control none -k $kern -c 1 --section SpeedOfLight --section WarpStateStats --section MemoryWorkloadAnalysis --metrics 'regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio' $t sweep --backend cuda --workload $W/one.yaml --aa=false --vendor=false --isolate=false --rounds 2 --report=false --tiles "128_128_4,$tile" --db $W/ncu.db > $f 2>&1; echo "ncu $tile rc=$? $(( $(date +%s) - T0 ))s"
  rm -f $W/ncu.db
done
pack
# 4. strata M 256: the run-1 winners and a few more BN values.
ST="128_128_4"
for x in 64_24_1 64_24_1.pdl1 64_48_1.pdl1 64_16_1.pdl1 64_80_1.pdl1 64_96_1 64_96_1.pdl1 64_112_1 64_112_1.pdl1 128_160_2 64_192_2.pingpong1 64_80_2.pingpong1 64_48_1.ksplit10.pdl1 64_128_1.ksplit40.pdl1 64_24_1.ksplit10.pdl1; do ST="$ST,$G/$x"; done
timeout 90 $t sweep --backend cuda --workload strata --m 256 --aa=false --rounds 8 --tiles "$ST" --db $W/m256.db > $W/m256.md 2> $W/m256.err; echo "m256 rc=$? $(( $(date +%s) - T0 ))s"
grep -iE "^\| 256" $W/m256.md | head -3
pack
