#!/bin/bash
# fused6's one H200 call (issue 16, hc_up at M 512: two CTAs per SM, MINB 2). Binaries built from
# branch fused6 (see docs/results/h200-fused6/README.md), carried in bin/fused6; run from the
# repository root: bash bin/fused6/call.sh. Steps: (1) TestHopperFused for hc_up_wgmma only (the new
# MINB 2 tiles bitwise against hc_up_f16's mma.sync tile, occupancy and registers per tile);
# (2) the hc_up sweep over the strata M, 24 rounds, no race; (3) the torch anchor's hc_up rows;
# (4) M 512 again over the MINB 2 tiles; (5) ncu of one M 512 launch of the best-guess MINB 2 tile.
# Packs $OUT/c.tgz after every step.
set -u
export PYTHONUNBUFFERED=1
B=bin/fused6; W=/tmp/f6; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
cp $B/call.sh $o/
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; nproc; } > $o/env.txt 2>&1
# 1. TestHopperFused, hc_up_wgmma only
(cd backend/cuda && TILEFIT_OUT=$o TILEFIT_FUSED_ONLY=hc_up_wgmma timeout 28 $W/cuda.test -test.run '^TestHopperFused$' -test.v -test.count=1 > $o/hopper.log 2>&1; echo "hopper exit $?" >> $o/hopper.log)
grep -E "CTAs per SM" $o/hopper.log | grep -E "minb2|128_160_2:|64_160_1:" | head -16; grep -E "^(--- |ok|FAIL|PASS)|hopper exit|Error|DIFFERS" $o/hopper.log | head -12; pack hopper
# 2. hc_up over the strata M, 24 rounds, every tile every round
HC=128_160_2,64_160_1,64_160_1.minb2.stages3.grid264,64_160_1.minb2.stages2.grid264,64_160_1.minb2.stages3.grid0,64_160_1.minb2.stages3.grid264.pdl1,64_128_1.minb2.stages4.grid264,64_128_1.minb2.stages3.grid264,64_160_1.hring1.minb2.stages4.grid264,64_96_1.minb2.stages4.grid264,64_256_1.minb2.stages2.grid264,64_160_1.minb2.stages3.grid264.epi1,128_128_2.pingpong1,128_128_2.hring1,hc_up_f16/32_128_4
timeout 32 $t sweep --backend cuda --workload strata --family hc_up_wgmma,hc_up_f16 --tiles $HC --m 256,512,1024,1983,2048 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $?" >> $o/hc.err; cp $W/hc.db $o/hc.db 2>/dev/null; gzip -9 $o/hc.db
grep -E "^(ALL|NOT|BATCH)" $o/hc.md; tail -2 $o/hc.err; pack hc
# 3. the torch anchor's hc_up rows, same call
timeout 26 python3 $B/torch_hc.py --m 256,512,1024,1983,2048 --secs 0.4 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; cat $o/torch.txt | tail -12; pack torch
# 4. M 512 again over the MINB 2 tiles
HC5=128_160_2,64_160_1.minb2.stages3.grid264,64_160_1.minb2.stages3.grid0,64_160_1.minb2.stages3.grid264.pdl1,64_160_1.minb2.stages2.grid264,64_128_1.minb2.stages4.grid264,64_160_1.hring1.minb2.stages4.grid264,64_96_1.minb2.stages4.grid264
timeout 10 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $HC5 --m 512 --rounds 24 --race=false --vendor=false --db $W/hc512.db > $o/hc512.md 2> $o/hc512.err
echo "hc512 exit $?" >> $o/hc512.err; cp $W/hc512.db $o/hc512.db 2>/dev/null; gzip -9 $o/hc512.db; tail -2 $o/hc512.err; pack hc512
# 5. ncu of one M 512 launch (achieved occupancy: two CTAs per SM?)
NCU=$(which ncu 2>/dev/null || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
tl=64_160_1.minb2.stages3.grid264
timeout 20 $NCU --target-processes all --graph-profiling node -k regex:hc_up_wgmma --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats \
  $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $tl --m 512 --rounds 2 --race=false --vendor=false --aa=false --isolate=false --report=false --db $W/ncu.db > $o/ncu-$tl.txt 2>&1
echo "ncu exit $?" >> $o/ncu-$tl.txt; grep -E "Achieved|Theoretical Occupancy|Block Limit|Duration|Eligible|Registers Per" $o/ncu-$tl.txt | head -14
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
