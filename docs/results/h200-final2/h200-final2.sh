#!/bin/bash
# Issue 10's closing H200 run, second session of 2026-12-01: the 13 strata
# shapes as plain GEMMs (h200-final-gemm13.yaml) with the mma.sync reference
# tile and 23 gemm_wgmma tiles (the 19 of h200-final.sh, plus hc_read's
# best plain tile 64_192_1 and three tiles of the fixed split-K class
# splitk2560, ksplit40) beside cuBLAS, fp32 Y, compiles included in the
# sweep's wall time; 8192³ beside cuBLAS on the same machine; then select
# across both families with the confirmation round, and the selector code.
# Run from the repository root with the binary in bin/final2/:
#   CGO_ENABLED=0 go build -ldflags=-s -o bin/final2/tilefit ./cmd/tilefit
#   (device) bash docs/results/h200-final2/h200-final2.sh      # carry bin/final2
# Everything lands in $OUT/final2.tgz (packed again after each step, so a
# step cut short by its timeout loses only itself).
set -u
W=/tmp/fin2; rm -rf $W; mkdir -p $W/out $W/sel
t=bin/final2/tilefit
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OUT=${OUT:-$W/outdir}; mkdir -p $OUT
o=$W/out
WL=docs/results/h200-final/h200-final-gemm13.yaml
T="128_128_4,gemm_wgmma/64_24_1.pdl1,gemm_wgmma/64_48_1,gemm_wgmma/64_96_1.pdl1,gemm_wgmma/64_80_1.pdl1,gemm_wgmma/64_80_2.pingpong1,gemm_wgmma/64_128_1,gemm_wgmma/64_128_2.pingpong1,gemm_wgmma/64_160_2.pingpong1,gemm_wgmma/64_192_2.pingpong1,gemm_wgmma/64_256_2.pingpong1,gemm_wgmma/128_128_2.pingpong1,gemm_wgmma/128_160_2,gemm_wgmma/128_192_2,gemm_wgmma/128_48_2,gemm_wgmma/64_48_1.ksplit10,gemm_wgmma/64_24_1.ksplit10.pdl1,gemm_wgmma/64_64_2.pingpong1.ksplit10,gemm_wgmma/64_48_1.ksplit16,gemm_wgmma/64_128_1.ksplit10,gemm_wgmma/64_192_1,gemm_wgmma/64_128_1.ksplit40,gemm_wgmma/64_192_1.ksplit40,gemm_wgmma/64_48_1.ksplit40"
pack() { cp $W/final2.db $o/final2.db 2>/dev/null; tar czf $OUT/final2.tgz -C $W out sel; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > $o/smi.txt 2>&1
$t version > $o/version.txt 2>&1
# 1. The strata sweep, both families, compiles included (the clock starts
#    before the compiles; the kernel cache of a fresh machine is empty).
/usr/bin/time -f "sweep wall %e s" timeout 300 $t sweep --backend cuda --family gemm_f16,gemm_wgmma --workload $WL --tiles "$T" --db $W/final2.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err
pack
# 2. 8192³ beside cuBLAS (same machine, its own database).
timeout 120 $t sweep --backend cuda --family gemm_f16,gemm_wgmma --workload docs/results/h200-final2/h200-sq8192.yaml \
  --tiles "128_128_4,gemm_wgmma/128_256_2,gemm_wgmma/128_128_2.pingpong1,gemm_wgmma/128_192_2" --db $W/sq.db > $o/sq8192.md 2> $o/sq8192.err
echo "sq8192 exit $?" >> $o/sq8192.err
cp $W/sq.db $o/sq8192.db
pack
# 3. select with its confirmation round (each winner re-measured against
#    the baseline in fresh paired rounds on this device).
/usr/bin/time -f "select wall %e s" timeout 330 $t select --backend cuda --family gemm_f16,gemm_wgmma --workload $WL --db $W/final2.db \
  --rounds 12 --budget 1s --policy-out $W/sel/policy.json --emit go,c,cpp,json --emit-dir $W/sel > $o/select.md 2> $o/select.err
echo "select exit $?" >> $o/select.err
pack
tail -n 3 $o/sweep.err $o/sq8192.err $o/select.err
grep -E "BITWISE|BATCH|^\| *(256|512|1024|1983|2048) " $o/sweep.md | head -14
