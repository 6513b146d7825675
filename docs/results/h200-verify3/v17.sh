#!/bin/bash
# Built on the development machine at 1f5bd24:
#   mkdir -p bin/v17
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags=-s -o bin/v17/tilefit ./cmd/tilefit
#   CGO_ENABLED=0 go test -c -ldflags=-s -o bin/v17/cuda.test ./backend/cuda
#   gzip -9 -f bin/v17/tilefit bin/v17/cuda.test
#   cp docs/results/h200-verify/verify-share.py docs/results/h200-verify3/v17.sh bin/v17/
# and run on the H200 from the repository root, carrying bin/v17:  bash bin/v17/v17.sh
# Early call, main at 1f5bd24 (asm DotF16): the default strata sweep --trace cold, its verify share;
# if any cell is over 24 %, the same sweep with --compile-ahead=false (cold); then the GPU tests
# refactored after the last device call.
set -u
B=bin/v17; W=/tmp/v17; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/v17.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; nproc; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
/usr/bin/time -f "sweep wall %e s" timeout 130 $t sweep --trace --backend cuda --workload strata --out-type f16 --db $W/race.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err
python3 $B/verify-share.py $o/sweep.err > $o/verify-share.txt 2>&1
cp $W/race.db $o/race.db; pack sweep
grep -E "sweep wall|^swept" $o/sweep.err; tail -n 3 $o/verify-share.txt; grep -E "^(ALL|NOT|BATCH)" $o/sweep.md
( cd backend/cuda && timeout 60 $W/cuda.test -test.v -test.timeout 55s -test.run 'TestStreamThroughPlan|TestDecodeThroughPlan|TestDecodeSplitThroughPlan' > $o/tests.log 2>&1; echo "tests exit $?" >> $o/tests.log )
grep -E "^(--- |ok|FAIL|PASS|tests exit)" $o/tests.log | head; pack tests
if python3 - $o/verify-share.txt <<'PY'
import re,sys
t=open(sys.argv[1]).read()
m=re.findall(r"(\d+\.\d+) ?%",t)
sys.exit(0 if m and max(map(float,m))>24 else 1)
PY
then
  rm -rf "$HOME/.cache/tilefit"
  /usr/bin/time -f "sweep2 wall %e s" timeout 140 $t sweep --trace --compile-ahead=false --backend cuda --workload strata --out-type f16 --db $W/race2.db > $o/sweep2.md 2> $o/sweep2.err
  echo "sweep2 exit $?" >> $o/sweep2.err
  python3 $B/verify-share.py $o/sweep2.err > $o/verify-share2.txt 2>&1
  grep -E "sweep2 wall" $o/sweep2.err; tail -n 3 $o/verify-share2.txt; pack sweep2
fi
