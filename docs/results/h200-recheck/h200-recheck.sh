#!/bin/bash
# After the kernel-source dedupe and the host-buffer reuse (2026-12-01,
# second session): the backend/cuda GPU tests, then the two recorded H200
# sweeps run again with the same seed, their output bits compared row by row
# with the recorded databases (same-bits.py), and their wall times.
# Built here with
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags=-s -o bin/final3/tilefit ./cmd/tilefit
#   CGO_ENABLED=0 go test -c -ldflags=-s -o bin/t/cuda.test ./backend/cuda && xz -f bin/t/cuda.test
#   (device) bash docs/results/h200-recheck/h200-recheck.sh      # carry bin/final3, bin/t
set -u
W=/tmp/re; rm -rf $W; mkdir -p $W/out
o=$W/out
t=bin/final3/tilefit
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OUT=${OUT:-$W/outdir}; mkdir -p $OUT
pack() { tar czf $OUT/recheck.tgz -C $W out; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > $o/smi.txt 2>&1
$t version > $o/version.txt 2>&1
xz -d -k -f bin/t/cuda.test.xz
(cd backend/cuda && timeout 240 ../../bin/t/cuda.test -test.v -test.timeout 230s > $o/cuda-tests.log 2>&1; echo "exit $?" >> $o/cuda-tests.log)
pack
T=$(grep -o 'T="[^"]*"' docs/results/h200-final2/h200-final2.sh | head -1 | sed 's/^T="//; s/"$//')
/usr/bin/time -f "sweep wall %e s" timeout 200 $t sweep --backend cuda --family gemm_f16,gemm_wgmma --workload docs/results/h200-final/h200-final-gemm13.yaml \
  --tiles "$T" --db $W/final3.db > $o/final3.md 2> $o/final3.err
echo "sweep exit $?" >> $o/final3.err
python3 docs/results/same-bits.py $W/final3.db docs/results/h200-final/final.sqlite > $o/final3-same-bits.txt 2>&1
cp $W/final3.db $o/; pack
/usr/bin/time -f "sweep wall %e s" timeout 200 $t sweep --backend cuda --family gemm_f16 --workload docs/results/h200-final/h200-final-gemm13.yaml \
  --db $W/gemm46b.db > $o/gemm46b.md 2> $o/gemm46b.err
echo "sweep exit $?" >> $o/gemm46b.err
# (gemm46.sqlite is kept gzipped since 2026-12-02; as run, this line read the plain file)
gunzip -c docs/results/h200-gemm46/gemm46.sqlite.gz > $W/gemm46.sqlite
python3 docs/results/same-bits.py $W/gemm46b.db $W/gemm46.sqlite > $o/gemm46b-same-bits.txt 2>&1
cp $W/gemm46b.db $o/; pack
grep -E "^(--- FAIL|exit|FAIL|ok|PASS)" $o/cuda-tests.log | tail -5
tail -n 2 $o/final3.err $o/gemm46b.err
cat $o/final3-same-bits.txt $o/gemm46b-same-bits.txt
grep -E "^\*\*" $o/final3.md $o/gemm46b.md
