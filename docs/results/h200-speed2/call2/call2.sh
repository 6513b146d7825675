#!/bin/bash
# Call 2 of the speed2 branch: the device tests of the changed backend code, then the strata
# sweep at M 256 (every family, fp16 Y, cold kernel cache, --trace). Built on the development
# machine as probe/probe.sh says (commit bbd82e4, README.md); run carrying bin/speed2:  bash bin/speed2/call2.sh
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=bin/speed2; W=/tmp/sp2; rm -rf $W; mkdir -p $W/o; o=$W/o
pack() { tar czf $OUT/call2.tgz -C $W o; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,clocks.sm,temperature.gpu --format=csv; $W/tilefit version; nproc; } > $o/env.txt 2>&1
( cd backend/cuda && timeout 60 $W/cuda.test -test.v -test.timeout 55s \
   -test.run 'TestModulesKeptAcrossKernels|TestTimeRound|TestKeepPairCatchesFaults|TestTimingModes|TestPlantedFaults|TestVerifierOnDevice|TestDroppedLastKOnDevice|TestDevice$' > $o/tests.log 2>&1; echo "tests exit $?" >> $o/tests.log )
grep -E "^(--- |ok|FAIL|PASS|tests exit|panic)" $o/tests.log | head -20
pack
rm -rf "$HOME/.cache/tilefit"
/usr/bin/time -f "sweep wall %e s" timeout 90 $W/tilefit sweep --trace --backend cuda --workload strata --m 256 --out-type f16 --db $W/p.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err
python3 $B/verify-share.py $o/sweep.err > $o/verify-share.txt 2>&1
grep -E "^(trace|swept|sweep|warning)" $o/sweep.err; tail -1 $o/verify-share.txt; grep -E "^(ALL|NOT|BATCH)" $o/sweep.md
pack
