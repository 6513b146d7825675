#!/bin/bash
# Built on the development machine at the commit named in README.md:
#   mkdir -p bin/final12
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags=-s -o bin/final12/tilefit ./cmd/tilefit
#   CGO_ENABLED=0 go test -c -ldflags=-s -o bin/final12/cuda.test ./backend/cuda
#   xz -9e bin/final12/tilefit bin/final12/cuda.test
#   cp ../shared/anchors/torch_fused.py docs/results/h200-verify/verify-share.py docs/results/h200-decode/table.py docs/results/h200-decode6/unxz.py bin/final12/
#   cp docs/results/h200-final12/final.sh bin/final12/
# and run on the H200 from the repository root, carrying bin/final12:  bash bin/final12/final.sh
# (h200-final11's final.sh; --const-weights now also adds gemm_wgmma's four PDL 2 tiles and gemm_decode's
# PRE 1 / PRE 4 split tiles, docs/results/h200-fused9 call 2)
# One call: the default strata sweep (every family, fp16 Y, --trace) from a cold kernel cache,
# the torch anchor in the same call, report and select of it, hc_up at M 512 over the candidates
# the defaults lack (HC512 below), the default decode sweep with the tool's copy bandwidth, the
# device verification tests, the strata sweep exhaustive (--race=false, warm cache), then the
# device conformance suites in the time left.
# Packs $OUT/final.tgz after every step.
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PYTHONUNBUFFERED=1
B=bin/final12; W=/tmp/fin; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/final.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
python3 $B/unxz.py $B/tilefit.xz $W/tilefit && chmod +x $W/tilefit
python3 $B/unxz.py $B/cuda.test.xz $W/cuda.test && chmod +x $W/cuda.test
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; nproc; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
# 1. the strata sweep, every family, fp16 Y, cold cache, race on
/usr/bin/time -f "sweep wall %e s" timeout 130 $t sweep --trace --backend cuda --workload strata --out-type f16 --const-weights --db $W/race.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err
python3 $B/verify-share.py $o/sweep.err > $o/verify-share.txt 2>&1
cp $W/race.db $o/race.db; pack sweep
grep -E "^(swept|sweep)" $o/sweep.err; tail -n 2 $o/verify-share.txt; grep -E "^(ALL|NOT|BATCH)" $o/sweep.md
# 2. the torch anchor, same call
timeout 110 python3 $B/torch_fused.py --m 256,512,1024,1983,2048 --secs 0.6 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; grep CHUNK $o/torch.txt; pack torch
# 3. the report and a policy per operator from the sweep's samples
$t report --db $W/race.db --workload strata > $o/report.md 2> $o/report.err
$t report --db $W/race.db --workload strata --format json --output $o/report.json 2>> $o/report.err
i=0
grep -o '^ *tilefit select --db [^ ].*' $o/sweep.md | sed 's/^ *//' | sort -u | while read -r line; do
  args=$(echo "${line#tilefit select }" | sed "s#--emit-dir [^ ]*#--emit-dir $o/sel$i#")
  timeout 30 $t select $args --confirm=false >> $o/select.md 2>> $o/select.err; echo "select $i exit $?" >> $o/select.err
  i=$((i+1))
done
pack report
# 3b. hc_up at M 512 (issue 16's one hc_up miss): the winner beside the tiles the defaults lack
HT=${HC512:-128_160_2,128_128_2.pingpong1.pdl2,128_160_2.pdl2,128_128_2.pdl2.epi1,128_128_2.pingpong1}
timeout 60 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $HT --m 512 --rounds 24 --db $W/hu.db > $o/hcup512.md 2> $o/hcup512.err
echo "hcup512 exit $?" >> $o/hcup512.err; cp $W/hu.db $o/hu.db
grep -E "^\| hc_up" $o/hcup512.md | head -3; pack hcup512
# 4. decode: the default decode sweep (every family), the tool's copy bandwidth, % of copy per cell
/usr/bin/time -f "decode wall %e s" timeout 60 $t sweep --backend cuda --workload decode --out-type f16 --const-weights --db $W/dec.db > $o/decode.md 2> $o/decode.err
echo "decode exit $?" >> $o/decode.err
timeout 30 $t devices --backend cuda --measure --db $W/dec.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
python3 $B/table.py $W/dec.db > $o/decode-table.txt 2>&1; cp $W/dec.db $o/dec.db
tail -n 2 $o/decode.err; cat $o/decode-table.txt | head -20; pack decode
# 5. device verification tests (issue 17)
( cd backend/cuda && timeout 70 $W/cuda.test -test.v -test.timeout 65s \
   -test.run 'TestVerifierOnDevice|TestDroppedLastKOnDevice|TestKeepPairCatchesFaults|TestKeepPairAndOnDevice|TestModulesKeptAcrossKernels' > $o/tests.log 2>&1; echo "tests exit $?" >> $o/tests.log )
grep -E "^(--- |ok|FAIL|PASS|tests exit)" $o/tests.log | head -10; pack tests
# 7. the conformance suites with the exact check (the new tiles included)
left=$(( ${END:-440} - $(el) ))
if [ $left -gt 20 ]; then
  ( cd backend/cuda && timeout $((left+3)) $W/cuda.test -test.v -test.timeout ${left}s \
     -test.run 'TestExactSweepCUDA|TestHopperFused|TestHopperQ8|TestWgmmaThroughPlan|TestWgmmaSplitK|TestDecode|TestFusedCUDAConformance|TestKeepPairAndOnDevice' > $o/conf.log 2>&1; echo "conf exit $?" >> $o/conf.log )
  grep -E "^(--- |ok|FAIL|PASS|panic|conf exit)" $o/conf.log | head -20
fi
pack conf
nvidia-smi --query-gpu=power.draw,power.limit,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
