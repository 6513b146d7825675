#!/bin/bash
# hopper call 1: checks, elementwise bench, fused sweep, gemm_wgmma A/B, torch anchor.
export CUDA_HOME=/usr/local/cuda
B=$(pwd)/bin/hopper
O=${OUT:-/tmp/out}; mkdir -p $O/r
cd $B && gunzip -kf tilefit.gz && chmod +x tilefit cuda.test && cd - >/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $O/r/smi.txt 2>&1
date -u > $O/r/times.txt
export TILEFIT_CUDA_CACHE=/tmp/tfcache
echo "== check $(date -u +%T)" >> $O/r/times.txt
TILEFIT_OUT=$O/r timeout 150 $B/cuda.test -test.run 'TestHopperFused$|TestWgmmaThroughPlan$|TestWgmmaSplitK$' -test.v > $O/r/check.log 2>&1; echo "rc $?" >> $O/r/times.txt
echo "== bench $(date -u +%T)" >> $O/r/times.txt
timeout 40 $B/cuda.test -test.run '^$' -test.bench FusedVendor -test.benchtime 3x -test.v > $O/r/bench.log 2>&1; echo "rc $?" >> $O/r/times.txt
echo "== sweep $(date -u +%T)" >> $O/r/times.txt
FAMS=hc_up_f16,hc_up_wgmma,swiglu_f16,swiglu_wgmma
if grep -qE "context is lost|LAUNCH_FAILED|ILLEGAL|panic:" $O/r/check.log; then FAMS=hc_up_f16,swiglu_f16,swiglu_wgmma; grep -q "swiglu_wgmma.*context is lost" $O/r/check.log && FAMS=hc_up_f16,swiglu_f16; echo "sweep families $FAMS" >> $O/r/times.txt; fi
( time timeout 180 $B/tilefit sweep --backend cuda --workload strata --family $FAMS --db $O/r/fused.db ) > $O/r/sweep.md 2> $O/r/sweep.err; echo "rc $?" >> $O/r/times.txt
echo "== ab $(date -u +%T)" >> $O/r/times.txt
timeout 60 $B/tilefit ab --backend cuda --workload $B/ab.yaml --family gemm_wgmma --a source:$B/old_gemm_wgmma.cu --b source:$B/new_gemm_wgmma.cu --tiles 128_256_2,128_128_2.pingpong1 --rounds 12 --out-type f16 > $O/r/ab.md 2>&1; echo "rc $?" >> $O/r/times.txt
echo "== torch $(date -u +%T)" >> $O/r/times.txt
timeout 130 python3 $B/torch_fused.py --m 256,1024,1983 --secs 1.0 > $O/r/torch.txt 2>&1; echo "rc $?" >> $O/r/times.txt
date -u >> $O/r/times.txt
cd $O && tar czf r.tgz r && cd - >/dev/null
cat $O/r/times.txt
echo "== check summary"; grep -E "^(--- |ok|FAIL|PASS)|DIFFERS|FLOAT64|FAULT|baseline|compiled|context" $O/r/check.log | head -60
echo "== bench"; grep -E "of copy|ofcopy" $O/r/bench.log | head
echo "== sweep"; tail -3 $O/r/sweep.err; grep -E "^\| (hc_up|Wshgu) |BITWISE|FAIL" $O/r/sweep.md | head -40
echo "== ab"; grep -E "^\|" $O/r/ab.md | head -20
echo "== torch"; tail -25 $O/r/torch.txt
