#!/bin/bash
# gemm_f16 (a subset: the tiles the mma.sync-only policy picked) + gemm_wgmma
# (its default sweep) + cublas on the strata workload, fp32 Y, on the H200.
set -u
W=/tmp/sw; rm -rf $W; mkdir -p $W
t=bin/hopper/tilefit
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} TILEFIT_CUDA_CACHE=/tmp/tfcache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > $W/smi.txt 2>&1
timeout 150 bin/hopper/cuda.test -test.run 'TestWgmmaThroughPlan$' -test.v > $W/plan-test.log 2>&1; echo "plan test rc=$?"
grep -E "^(--- |ok|FAIL|PASS)" $W/plan-test.log | head
TILES="128_128_4,64_128_4,64_64_4,32_32_4,32_32_2,32_64_2,gemm_wgmma/128_256_2,gemm_wgmma/128_128_2,gemm_wgmma/128_128_2.pingpong1,gemm_wgmma/128_128_1,gemm_wgmma/128_192_2,gemm_wgmma/128_160_2,gemm_wgmma/128_64_2,gemm_wgmma/128_64_2.pingpong1,gemm_wgmma/128_64_1,gemm_wgmma/128_48_2,gemm_wgmma/128_48_2.pingpong1,gemm_wgmma/128_48_1,gemm_wgmma/64_256_2.pingpong1,gemm_wgmma/64_256_1,gemm_wgmma/64_128_2.pingpong1,gemm_wgmma/64_128_1,gemm_wgmma/64_192_2.pingpong1,gemm_wgmma/64_192_1,gemm_wgmma/64_160_2.pingpong1,gemm_wgmma/64_160_1,gemm_wgmma/64_64_2.pingpong1,gemm_wgmma/64_64_1,gemm_wgmma/64_48_2.pingpong1,gemm_wgmma/64_48_1"
$t devices --db $W/h200.db > $W/devices.txt 2>&1
/usr/bin/time -f "sweep wall %e s" timeout ${ST:-420} $t sweep --backend cuda --workload strata --tiles "$TILES" --db $W/h200.db > $W/strata.md 2> $W/strata.err
echo "sweep exit $?" >> $W/strata.err
tail -5 $W/strata.err
cp $W/h200.db $OUT/h200-wgmma.db
tar czf $OUT/sweep.tgz -C $W --exclude h200.db .
grep -iE "bitwise|chunk|failed" $W/strata.md | head -20
