#!/bin/bash
# The epi branch's last call (build: see README.md), from the repository root: bash bin/epi/final.sh
# 1. the default strata sweep (every family of the three operators, fp16 Y, --trace) from a cold
#    kernel cache, with the branch's defaults; 2. its report; 3. the torch anchor in the same call;
# 4. the device tests of the staged-epilogue tiles (fp32 and fp16 Y, the fused families) if time is left.
set -u
export PYTHONUNBUFFERED=1
B=bin/epi; W=/tmp/epi; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/r.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; nproc; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
/usr/bin/time -f "sweep wall %e s" timeout 110 $t sweep --trace --backend cuda --workload strata --out-type f16 --db $W/race.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err
grep -E "^(swept|sweep)" $o/sweep.err; grep -E "^(ALL|NOT|BATCH)" $o/sweep.md
$t report --db $W/race.db --workload strata > $o/report.md 2> $o/report.err
gzip -c $W/race.db > $o/race.db.gz; pack sweep
left=$(( 188 - $(el) )); [ $left -gt 75 ] && left=75
if [ $left -gt 25 ]; then
  timeout $left python3 $B/torch_fused.py --m 256,512,1024,1983,2048 --secs 0.4 --json $o/torch.json > $o/torch.txt 2>&1
  echo "torch exit $?" >> $o/torch.txt; grep -E "CHUNK|hc_up  compiled|swiglu compiled" $o/torch.txt
fi
pack torch
left=$(( 192 - $(el) ))
if [ $left -gt 30 ]; then
  ( cd backend/cuda && TILEFIT_OUT=$o timeout $left $W/cuda.test -test.v -test.timeout $((left-3))s -test.run 'TestWgmmaThroughPlan|TestHopperFused' > $o/tests.log 2>&1; echo "tests exit $?" >> $o/tests.log )
  grep -E "^(--- |ok|FAIL|PASS|tests exit)" $o/tests.log | head -10
fi
pack tests
