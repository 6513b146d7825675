#!/bin/bash
# The closing H200 run of the 2026-12-01 session (issues 9/10): the 13 strata
# shapes as plain GEMMs (h200-final-gemm13.yaml) with the mma.sync reference
# tile and the gemm_wgmma tiles that won the earlier sweeps (plain, PDL and
# fixed split-K classes) beside cuBLAS, fp32 Y; then select across both
# families (one numerics class per shape) with the selector code.
# Run from the repository root with the binary in bin/final/:
#   CGO_ENABLED=0 go build -o bin/final/tilefit ./cmd/tilefit
#   (device) bash docs/results/h200-final/h200-final.sh      # carry bin/final
set -u
W=/tmp/fin; rm -rf $W; mkdir -p $W
t=bin/final/tilefit
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OUT=${OUT:-$W/out}; mkdir -p $OUT
WL=docs/results/h200-final/h200-final-gemm13.yaml
T="128_128_4,gemm_wgmma/64_24_1.pdl1,gemm_wgmma/64_48_1,gemm_wgmma/64_96_1.pdl1,gemm_wgmma/64_80_1.pdl1,gemm_wgmma/64_80_2.pingpong1,gemm_wgmma/64_128_1,gemm_wgmma/64_128_2.pingpong1,gemm_wgmma/64_160_2.pingpong1,gemm_wgmma/64_192_2.pingpong1,gemm_wgmma/64_256_2.pingpong1,gemm_wgmma/128_128_2.pingpong1,gemm_wgmma/128_160_2,gemm_wgmma/128_192_2,gemm_wgmma/128_48_2,gemm_wgmma/64_48_1.ksplit10,gemm_wgmma/64_24_1.ksplit10.pdl1,gemm_wgmma/64_64_2.pingpong1.ksplit10,gemm_wgmma/64_48_1.ksplit16,gemm_wgmma/64_128_1.ksplit10"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > $OUT/smi.txt 2>&1
timeout 40 $t devices --backend cuda --db $W/final.db > $OUT/devices.txt 2>&1
/usr/bin/time -f "sweep wall %e s" timeout 230 $t sweep --backend cuda --family gemm_f16,gemm_wgmma --workload $WL --tiles "$T" --db $W/final.db > $OUT/sweep.md 2> $OUT/sweep.err
echo "sweep exit $?" >> $OUT/sweep.err
cp $W/final.db $OUT/final.db
/usr/bin/time -f "select wall %e s" timeout 90 $t select --backend cuda --family gemm_f16,gemm_wgmma --workload $WL --db $W/final.db --rounds 12 --budget 3s --out $W/sel/policy.json --emit go,c,cpp,json --emit-dir $W/sel > $OUT/select.md 2> $OUT/select.err
echo "select exit $?" >> $OUT/select.err
cp $W/final.db $OUT/final.db
tar czf $OUT/sel.tgz -C $W sel
tail -3 $OUT/sweep.err $OUT/select.err
grep -E "BITWISE|^\| *(256|512|1024|1983|2048) " $OUT/sweep.md | head -12
