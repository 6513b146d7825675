#!/bin/bash
# fused7's first H200 call (issue 16, hc_up at M 512): binaries of branch fused7 (commit in
# docs/results/h200-fused7/README.md) carried in bin/fused7; run from the repository root:
# bash bin/fused7/call1.sh. Steps: (1) TestHopperFused for hc_up_wgmma only (XRES / HPF 2 tiles
# bitwise against hc_up_f16's mma.sync tile); (2) one paired sweep at M 256/512/1024 over the
# candidates, 24 rounds, no race; (3) the torch anchor's hc_up rows, same call; (4) ncu source-level
# stall sampling (SourceCounters, WarpStateStats) of one M 512 launch of 128_160_2 and of
# 128_160_2.xres5. Packs $OUT/c.tgz after every step.
set -u
export PYTHONUNBUFFERED=1
B=bin/fused7; W=/tmp/f7; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
cp $B/call1.sh $o/
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; nproc; } > $o/env.txt 2>&1
# 1. TestHopperFused, hc_up_wgmma only
(cd backend/cuda && TILEFIT_OUT=$o TILEFIT_FUSED_ONLY=hc_up_wgmma timeout 45 $W/cuda.test -test.run '^TestHopperFused$' -test.v -test.count=1 > $o/hopper.log 2>&1; echo "hopper exit $?" >> $o/hopper.log)
grep -E "xres|hpf2" $o/hopper.log | grep -E "M:300" | head -20; grep -E "^(--- |ok|FAIL|PASS)|hopper exit|Error|DIFFERS|error" $o/hopper.log | head -20; pack hopper
# 2. paired sweep, M 256/512/1024
HC=128_160_2,128_160_2.xres5,128_160_2.hpf2.xres5,128_160_2.hpf2,128_128_2.xres5,128_128_2.hpf2.xres5,128_128_2.pingpong1,128_160_2.hbuf2.hpre1.xres5,128_160_2.xres5.stages4,64_160_1.xres5,128_160_2.xres5.epi1,128_160_2.hbuf2.hpre1.hpf2,hc_up_f16/32_128_4
timeout 45 $t sweep --backend cuda --workload strata --family hc_up_wgmma,hc_up_f16 --tiles $HC --m 256,512,1024 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $?" >> $o/hc.err; cp $W/hc.db $o/hc.db 2>/dev/null; gzip -9 $o/hc.db
grep -E "^(ALL|NOT|BATCH)" $o/hc.md; tail -2 $o/hc.err; pack hc
# 3. the torch anchor's hc_up rows, same call
timeout 25 python3 $B/torch_hc.py --m 256,512,1024 --secs 0.4 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; tail -7 $o/torch.txt; pack torch
# 4. ncu source-level stall sampling of one M 512 launch
NCU=$(which ncu 2>/dev/null || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for tl in 128_160_2 128_160_2.xres5; do
  timeout 30 $NCU --target-processes all --graph-profiling node -k regex:hc_up_wgmma --launch-skip 3 --launch-count 1 --import-source yes \
    --section SpeedOfLight --section SourceCounters --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis -o $W/o/ncu-$tl \
    $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $tl --m 512 --rounds 2 --race=false --vendor=false --aa=false --isolate=false --report=false --db $W/ncu-$tl.db > $o/ncu-$tl.log 2>&1
  echo "ncu exit $?" >> $o/ncu-$tl.log
  timeout 15 $NCU -i $W/o/ncu-$tl.ncu-rep --page details > $o/ncu-$tl.txt 2>&1
  timeout 15 $NCU -i $W/o/ncu-$tl.ncu-rep --page source --csv --print-source sass > $o/ncu-$tl-sass.csv 2> $o/ncu-$tl-sass.err
  grep -E "Duration|Eligible|Issued Warp|Stall|DRAM Through|L2 Cache Through" $o/ncu-$tl.txt | head -12; wc -l $o/ncu-$tl-sass.csv; head -c 600 $o/ncu-$tl-sass.err
  pack ncu-$tl
done
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
