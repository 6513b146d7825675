#!/bin/bash
# fused5 call 2 (issue 16, hc_up at M 512). Built as call1.sh says (same commit, e9e9afc), copied to
# bin/fused5 and run on the H200 from the repository root, carrying bin/fused5: bash bin/fused5/call2.sh
# (call 1 ran TestHopperFused, PASS, then its sweeps refused --out-type f16 on a fused-only workload;
# this call runs them without it). Steps: (1) the hc_up sweep over the strata M with the new tiles, 24
# rounds, no race (every tile every round), hc_up_f16's mma.sync tile included for the bitwise class
# check; (2) the torch anchor; (3) SwiGLU at M 1983 over its candidates; (3b) M 512 again over the
# tiles near its best; (4) ncu of M 512 tiles.
# Packs $OUT/c2.tgz after every step.
set -u
export PYTHONUNBUFFERED=1
B=bin/fused5; W=/tmp/f5; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c2.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; nproc; } > $o/env.txt 2>&1
# 1. hc_up over the strata M, the new tiles, 24 rounds, every tile every round
HC=128_160_2,128_128_2.pingpong1,128_160_2.hpf1,128_160_2.hring1,128_160_2.hring1.hpf1,128_160_2.mc1,128_160_2.hring1.mc1,128_160_2.mc2,128_128_2.pingpong1.hpf1,128_128_2.pingpong1.mc1,128_128_2.hring1,128_128_2.epi1,128_320_2,128_320_2.hpf1,128_320_2.hring1,128_320_2.hring1.hpf1,128_320_2.mc1,128_320_2.hring1.mc1,64_320_1.hring1,hc_up_f16/32_128_4
timeout 90 $t sweep --backend cuda --workload strata --family hc_up_wgmma,hc_up_f16 --tiles $HC --m 256,512,1024,1983,2048 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $?" >> $o/hc.err; cp $W/hc.db $o/hc.db; gzip -9 $o/hc.db
grep -E "^(ALL|NOT|BATCH)" $o/hc.md; grep -E "^\| hc_up" $o/hc.md | head -8; pack hc
# 2. the torch anchor, same call
timeout 85 python3 $B/torch_fused.py --m 256,512,1024,1983,2048 --secs 0.6 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; grep -iE "hc_up|swiglu" $o/torch.txt | head -20; pack torch
# 3. SwiGLU at M 1983: the candidates near the cell's best (the first is the reference)
SW=128_160_2.pdl1,128_160_2.pdl1.epi1,128_160_2,128_160_2.epi1,128_128_2.pdl1,128_80_2.pdl1,128_160_2.ksplit20.pdl1,128_160_2.mc1.pdl1,128_160_2.mc2.pdl1,128_128_2.pingpong1.pdl1
timeout 30 $t sweep --backend cuda --workload strata --family swiglu_wgmma --tiles $SW --m 1983 --rounds 24 --race=false --vendor=false --db $W/sw.db > $o/sw.md 2> $o/sw.err
echo "sw exit $?" >> $o/sw.err; cp $W/sw.db $o/sw.db; gzip -9 $o/sw.db; grep -E "^\| swiglu" $o/sw.md | head -3; pack sw
# 3b. M 512 again (a second run of the cell: tiles that hold a slow state for rounds at a time)
HC5=128_160_2,128_320_2,128_320_2.hpf1,128_320_2.hring1,128_320_2.hring1.hpf1,128_320_2.mc1,128_320_2.hring1.mc1,128_160_2.hpf1,128_160_2.hring1,128_160_2.hring1.hpf1,128_160_2.mc1
timeout 30 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $HC5 --m 512 --rounds 24 --race=false --vendor=false --db $W/hc512.db > $o/hc512.md 2> $o/hc512.err
echo "hc512 exit $?" >> $o/hc512.err; cp $W/hc512.db $o/hc512.db; gzip -9 $o/hc512.db; grep -E "^\| hc_up" $o/hc512.md | head -3; pack hc512
# 4. ncu of M 512 tiles (kernels in CUDA graphs profiled as nodes)
NCU=$(which ncu 2>/dev/null || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for tl in 128_320_2.hring1 128_160_2; do
  timeout 25 $NCU --target-processes all --graph-profiling node -k regex:hc_up_wgmma --launch-skip 3 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats \
    $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $tl --m 512 --rounds 2 --race=false --vendor=false --aa=false --isolate=false --report=false --db $W/ncu-$tl.db > $o/ncu-$tl.txt 2>&1
  echo "ncu exit $?" >> $o/ncu-$tl.txt; pack ncu-$tl
done
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
