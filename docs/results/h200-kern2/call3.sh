#!/bin/bash
# kern2 call 3 (the last): the device tests of the wgmma families (new gemm_wgmma defaults with MC
# extras, MC tiles of the fused families), then hc_up HPRE tiles and swiglu pingpong tiles beside
# the current best and the torch anchor, then the new default gemm_wgmma sweep at M 1983 in the time left.
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PYTHONUNBUFFERED=1
B=bin/kern2; W=/tmp/kern2; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c3.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
. $B/tiles3.env
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
sw() { # name yaml family tiles timeout [extra]
  /usr/bin/time -f "$1 wall %e s" timeout $5 $t sweep --backend cuda --workload $B/$2 --family $3 ${4:+--tiles "$4"} ${6:-} --db $W/$1.db > $o/$1.md 2> $o/$1.err
  echo "$1 exit $?" >> $o/$1.err; cp $W/$1.db $o/ 2>/dev/null; tail -n 2 $o/$1.err; pack $1
}
left=125
( cd backend/cuda && timeout $((left+3)) $W/cuda.test -test.v -test.timeout ${left}s \
   -test.run 'TestHopperFused|TestWgmmaSplitK|TestExactSweepCUDA|TestFusedCUDAConformance' > $o/tests.log 2>&1; echo "tests exit $?" >> $o/tests.log )
grep -E "^(--- |ok|FAIL|PASS|tests exit|panic)" $o/tests.log | head -20; pack tests
sw hu hu.yaml hc_up_f16,hc_up_wgmma "$HU" 30
sw sw sw.yaml swiglu_f16,swiglu_wgmma "$SW" 25
timeout 40 python3 $B/torch_fused.py --m 512,1983,2048 --secs 0.2 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; grep -E "CHUNK|hc_up|swiglu" $o/torch.txt | head -30; pack torch
left=$(( 174 - $(el) ))
if [ $left -gt 12 ]; then sw g11 g11f.yaml gemm_wgmma "" $left "--out-type f16"; fi
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
