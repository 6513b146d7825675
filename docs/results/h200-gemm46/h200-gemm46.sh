#!/bin/bash
# Issue 9's last check: the mma.sync family's whole default sweep (46 tiles)
# on the 13 strata shapes as plain GEMMs, with cuBLAS, after the operator
# redesign — to compare with the sweep of 2026-11-29 (h200-strata.md): the
# same tiles win, ALL BITWISE, times within noise.
# Run from the repository root with the binary in bin/final2/:
#   CGO_ENABLED=0 go build -ldflags=-s -o bin/final2/tilefit ./cmd/tilefit
#   (device) bash docs/results/h200-gemm46/h200-gemm46.sh      # carry bin/final2
set -u
W=/tmp/g46; rm -rf $W; mkdir -p $W/out
t=bin/final2/tilefit
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OUT=${OUT:-$W/outdir}; mkdir -p $OUT
o=$W/out
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > $o/smi.txt 2>&1
/usr/bin/time -f "sweep wall %e s" timeout 280 $t sweep --backend cuda --family gemm_f16 \
  --workload docs/results/h200-final/h200-final-gemm13.yaml --db $W/gemm46.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err
cp $W/gemm46.db $o/
tar czf $OUT/gemm46.tgz -C $W out
tail -n 2 $o/sweep.err
grep -E "BITWISE|BATCH" $o/sweep.md | head -4
