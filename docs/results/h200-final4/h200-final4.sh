#!/bin/bash
# The 24-tile strata sweep of h200-final2.sh once more with the last
# verification change (the raw-word finite scan), its wall time, and its
# output bits against h200-final2's database (same-bits.py).
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags=-s -o bin/final4/tilefit ./cmd/tilefit
#   (device) bash docs/results/h200-final4/h200-final4.sh      # carry bin/final4
set -u
W=/tmp/f4; rm -rf $W; mkdir -p $W/out
o=$W/out
t=bin/final4/tilefit
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OUT=${OUT:-$W/outdir}; mkdir -p $OUT
$t version > $o/version.txt 2>&1
T=$(grep -o 'T="[^"]*"' docs/results/h200-final2/h200-final2.sh | head -1 | sed 's/^T="//; s/"$//')
/usr/bin/time -f "sweep wall %e s" timeout 170 $t sweep --backend cuda --family gemm_f16,gemm_wgmma --workload docs/results/h200-final/h200-final-gemm13.yaml \
  --tiles "$T" --db $W/final4.db > $o/final4.md 2> $o/final4.err
echo "sweep exit $?" >> $o/final4.err
python3 docs/results/same-bits.py $W/final4.db docs/results/h200-final/final.sqlite > $o/final4-same-bits.txt 2>&1
cp $W/final4.db $o/
tar czf $OUT/final4.tgz -C $W out
tail -n 3 $o/final4.err; cat $o/final4-same-bits.txt; grep -E "^\*\*" $o/final4.md
