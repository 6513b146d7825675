#!/bin/bash
# Call 1 (probe) of the speed2 branch: the strata sweep at M 256 and 2048, fp16 Y, every family,
# cold kernel cache, --trace (start-up steps, worker backend steps, verify/time parts), then the
# device tests of the changed backend code. Built on the development machine:
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags=-s -o /work/main/bin/speed2/tilefit ./cmd/tilefit
#   CGO_ENABLED=0 go test -c -ldflags=-s -o /work/main/bin/speed2/cuda.test ./backend/cuda
#   gzip -9 -f /work/main/bin/speed2/tilefit /work/main/bin/speed2/cuda.test
#   cp docs/results/h200-verify/verify-share.py docs/results/h200-speed2/probe/probe.sh /work/main/bin/speed2/
# run from the repository root carrying bin/speed2:  bash bin/speed2/probe.sh
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=bin/speed2; W=/tmp/sp2; rm -rf $W; mkdir -p $W/o; o=$W/o
pack() { tar czf $OUT/probe.tgz -C $W o; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,clocks.sm,temperature.gpu --format=csv; $W/tilefit version; nproc; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
/usr/bin/time -f "sweep wall %e s" timeout 150 $W/tilefit sweep --trace --backend cuda --workload strata --m 256,2048 --out-type f16 --db $W/p.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err
python3 $B/verify-share.py $o/sweep.err > $o/verify-share.txt 2>&1
pack
grep -E "^(trace|swept|sweep)" $o/sweep.err
# the same sweep again into a fresh database, warm kernel cache: start-up without compiles
/usr/bin/time -f "warm wall %e s" timeout 100 $W/tilefit sweep --trace --backend cuda --workload strata --m 256 --out-type f16 --db $W/w.db > $o/warm.md 2> $o/warm.err
echo "warm exit $?" >> $o/warm.err
grep -E "^(trace|swept|warm)" $o/warm.err
pack
( cd backend/cuda && timeout 90 $W/cuda.test -test.v -test.timeout 85s \
   -test.run 'TestModulesKeptAcrossKernels|TestTimingModes|TestPlantedFaults|TestVerifierOnDevice|TestDevice$' > $o/tests.log 2>&1; echo "tests exit $?" >> $o/tests.log )
grep -E "^(--- |ok|FAIL|PASS|tests exit)" $o/tests.log | head -20
pack
