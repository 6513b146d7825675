#!/bin/bash
# Built on the development machine at the commit named in README.md:
#   mkdir -p bin/final6
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags=-s -o bin/final6/tilefit ./cmd/tilefit
#   CGO_ENABLED=0 go test -c -ldflags=-s -o bin/final6/cuda.test ./backend/cuda
#   gzip -9 -f bin/final6/tilefit bin/final6/cuda.test
#   cp ../shared/anchors/torch_fused.py docs/results/h200-verify/verify-share.py docs/results/h200-verify/race-chunk.py bin/final6/
#   cp docs/results/h200-final6/final.sh bin/final6/
# and run on the H200 from the repository root, carrying bin/final6:  bash bin/final6/final.sh
# One call: the default strata sweep (every family, fp16 Y) from a cold kernel cache, the torch
# anchor in the same call, report and select of it, the device verification tests, the same
# sweep exhaustive (--race=false), then the device conformance suites in the time left.
# Packs $OUT/final.tgz after every step.
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PYTHONUNBUFFERED=1
B=bin/final6; W=/tmp/fin; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/final.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; nproc; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
# 1. the strata sweep, every family, fp16 Y, cold cache, race on
/usr/bin/time -f "sweep wall %e s" timeout 170 $t sweep --backend cuda --workload strata --out-type f16 --db $W/race.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err
python3 $B/verify-share.py $o/sweep.err > $o/verify-share.txt 2>&1
cp $W/race.db $o/race.db; pack sweep
tail -n 4 $o/sweep.err; tail -n 2 $o/verify-share.txt
# 2. the torch anchor, same call
timeout 130 python3 $B/torch_fused.py --m 256,512,1024,1983,2048 --secs 0.6 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; grep CHUNK $o/torch.txt; pack torch
# 3. the report and a policy from the sweep's samples
$t report --db $W/race.db --workload strata > $o/report.md 2> $o/report.err
$t report --db $W/race.db --workload strata --format json --output $o/report.json 2>> $o/report.err
i=0
grep -o '^ *tilefit select --db .*' $o/sweep.md | sed 's/^ *//' | sort -u | while read -r line; do
  args=$(echo "${line#tilefit select }" | sed "s#--emit-dir [^ ]*#--emit-dir $o/sel$i#")
  timeout 30 $t select $args --confirm=false >> $o/select.md 2>> $o/select.err; echo "select $i exit $?" >> $o/select.err
  i=$((i+1))
done
pack report
# 4. device verification tests (issue 17): the dropped-last-k kernel, the device verifier
( cd backend/cuda && timeout 60 $W/cuda.test -test.v -test.timeout 55s \
   -test.run 'TestVerifySourceOnHost|TestVerifierOnDevice|TestDroppedLastKOnDevice' > $o/tests.log 2>&1; echo "tests exit $?" >> $o/tests.log )
grep -E "^(--- |ok|FAIL|PASS|tests exit)" $o/tests.log | head -10; pack tests
# 5. the same sweep with every candidate timed every round (warm cache)
left=$(( 420 - $(el) ))
if [ $left -gt 60 ]; then
  /usr/bin/time -f "exhaustive wall %e s" timeout $left $t sweep --backend cuda --workload strata --out-type f16 --race=false --db $W/full.db > $o/full.md 2> $o/full.err
  echo "exhaustive exit $?" >> $o/full.err
  python3 $B/race-chunk.py $W/race.db $W/full.db > $o/race-chunk.txt 2>&1; echo "race-chunk exit $?" >> $o/race-chunk.txt
  cp $W/full.db $o/full.db; pack exhaustive; tail -n 3 $o/full.err; tail -n 12 $o/race-chunk.txt
fi
# 6. the conformance suites with the exact check, in the time left
left=$(( 505 - $(el) ))
if [ $left -gt 30 ]; then
  ( cd backend/cuda && timeout $((left+3)) $W/cuda.test -test.v -test.timeout ${left}s \
     -test.run 'TestExactSweepCUDA|TestWgmmaSplitK|TestFusedCUDAConformance|TestHopperFused' > $o/conf.log 2>&1; echo "conf exit $?" >> $o/conf.log )
  grep -E "^(--- |ok|FAIL|PASS|panic|conf exit)" $o/conf.log | head -20
fi
nvidia-smi --query-gpu=power.draw,power.limit,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
