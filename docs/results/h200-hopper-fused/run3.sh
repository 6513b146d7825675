#!/bin/bash
# hopper call 3: the fused operators' default sweep (cold cache) and the torch anchor in the same run.
export CUDA_HOME=/usr/local/cuda
B=$(pwd)/bin/hopper
O=${OUT:-/tmp/out}; mkdir -p $O/r
cd $B && gunzip -kf tilefit.gz && chmod +x tilefit && cd - >/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $O/r/smi.txt 2>&1
date -u > $O/r/times.txt
echo "== fused sweep $(date -u +%T)" >> $O/r/times.txt
( time timeout 200 $B/tilefit sweep --backend cuda --workload strata --family hc_up_f16,hc_up_wgmma,swiglu_f16,swiglu_wgmma --db $O/r/fused.db ) > $O/r/sweep.md 2> $O/r/sweep.err; echo "rc $?" >> $O/r/times.txt
echo "== torch $(date -u +%T)" >> $O/r/times.txt
timeout 150 python3 $B/torch_fused.py --m 256,1024,1983 --secs 1.0 > $O/r/torch.txt 2>&1; echo "rc $?" >> $O/r/times.txt
date -u >> $O/r/times.txt
cd $O && tar czf r.tgz r && cd - >/dev/null
cat $O/r/times.txt; tail -3 $O/r/sweep.err
grep -E "^\| (hc_up|Wshgu) .*\| *(256|512|1024|1983|2048) \||BITWISE|Failures" $O/r/sweep.md | head -16
grep -E "hc_up|swiglu|CHUNK" $O/r/torch.txt
