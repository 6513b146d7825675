#!/bin/bash
# Built on the development machine at the commit named in README.md:
#   mkdir -p /work/main/bin/verify4
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags=-s -o /work/main/bin/verify4/tilefit ./cmd/tilefit
#   CGO_ENABLED=0 go test -c -ldflags=-s -o /work/main/bin/verify4/cuda.test ./backend/cuda
#   gzip -9 -f /work/main/bin/verify4/tilefit /work/main/bin/verify4/cuda.test
#   cp docs/results/h200-verify/verify-share.py docs/results/h200-verify4/v4.sh /work/main/bin/verify4/
# and run on the H200 from the repository root, carrying bin/verify4:  bash bin/verify4/v4.sh
# One call (a cap of 220 s of device lease, cold start included): the default strata sweep
# (every family, fp16 Y, --trace, race on) from a cold kernel cache, its phase shares, then the
# device verification tests in the time left. The exhaustive sweep (--race=false) does not fit.
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PYTHONUNBUFFERED=1
B=bin/verify4; W=/tmp/v4; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/v4.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; nproc; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
# 1. the strata sweep, every family, fp16 Y, cold cache, race on
/usr/bin/time -f "sweep wall %e s" timeout 110 $t sweep --trace --backend cuda --workload strata --out-type f16 --db /tmp/r.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err
python3 $B/verify-share.py $o/sweep.err > $o/verify-share.txt 2>&1
gzip -c /tmp/r.db > $o/race.db.gz; pack sweep
grep -E "^(swept|sweep)" $o/sweep.err; tail -n 2 $o/verify-share.txt; grep -E "^(ALL|NOT|BATCH)" $o/sweep.md | cut -c1-200
# 2. the device verification tests: the quick ones, then TestExactSweepCUDA in the time left
( cd backend/cuda && timeout 25 $W/cuda.test -test.v -test.timeout 22s \
   -test.run 'TestDroppedLastKOnDevice|TestVerifierOnDevice|TestKeepPairCatchesFaults|TestKeepPairAndOnDevice' > $o/tests.log 2>&1; echo "tests exit $?" >> $o/tests.log )
grep -E "^(--- |ok|FAIL|PASS|panic|tests exit)" $o/tests.log | head -20; pack tests
left=$(( 128 - $(el) ))
if [ $left -gt 8 ]; then
  ( cd backend/cuda && timeout $((left+2)) $W/cuda.test -test.v -test.timeout ${left}s -test.run 'TestExactSweepCUDA' > $o/exact.log 2>&1; echo "exact exit $?" >> $o/exact.log )
  grep -E "^(--- |ok|FAIL|PASS|panic|exact exit)" $o/exact.log | head -20
fi
nvidia-smi --query-gpu=power.draw,power.limit,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
