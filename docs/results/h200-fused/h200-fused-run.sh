#!/usr/bin/env bash
# The H200 run of docs/results/h200-fused/README.md (issue 9 item 4), from the
# repository root with bin/fused carried:  bash docs/results/h200-fused/h200-fused-run.sh "$OUT"
set -u
out=${1:-out}; mkdir -p "$out"
b=bin/fused; t=$b/tilefit
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} TILEFIT_CUDA_CACHE=/tmp/tfcache
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > "$out/smi.txt" 2>&1
# 1. CUDA conformance of the fused families and gemm_f16's row tail.
/usr/bin/time -f "conformance wall %e s" timeout 140 $b/cuda.test -test.run 'TestFusedCUDA|TestGemmTailCUDA|TestNVRTCOnly' -test.v > "$out/conformance.log" 2>&1
echo "conformance exit $?" >> "$out/conformance.log"
# 2. The strata workload's fused operators (hc_up as hc_up_f16, Wshgu as swiglu_f16).
/usr/bin/time -f "sweep wall %e s" timeout 130 $t sweep --backend cuda --workload strata --family hc_up_f16,swiglu_f16 --db "$out/fused.db" > "$out/strata-fused.md" 2> "$out/strata-fused.err"
echo "sweep exit $?" >> "$out/strata-fused.err"
# 3. A/B at M 1025 and 1983: fused vs unfused SwiGLU; the row tail on swiglu, hc_up and gemm_f16 (Wout).
{
for ab in "swiglu_f16 tile:64_64_4 tile:64_64_4.chain1" "swiglu_f16 tile:64_64_4 tile:64_64_4.tail16" \
          "hc_up_f16 tile:64_128_4 tile:64_128_4.tail16" "hc_up_f16 tile:32_128_4.reg1 tile:32_128_4.reg1.tail16" \
          "gemm_f16 tile:128_128_4 tile:128_128_4.tail32" "gemm_f16 tile:64_128_4 tile:64_128_4.tail16"; do
  set -- $ab
  echo "### tilefit ab --backend cuda --workload ab.yaml --family $1 --a $2 --b $3"
  timeout 40 $t ab --backend cuda --workload $b/ab.yaml --family $1 --a $2 --b $3 2>&1
  echo "(exit $?)"
done
} > "$out/ab.md" 2>&1
tar czf "$out/fused-db.tgz" -C "$out" fused.db 2>/dev/null; rm -f "$out/fused.db"*
