#!/bin/bash
# fused7's second H200 call: OVL (the epilogue under the next unit's first k-blocks). Binaries of
# branch fused7 at 396a759, carried in bin/fused7; run from the repository root: bash bin/fused7/call2.sh.
# Steps: (1) TestHopperFused for hc_up_wgmma only (the OVL tiles bitwise against hc_up_f16's mma.sync
# tile, and compiler warnings); (2) one paired sweep at M 256/512/1024/2048 over the candidates, 24
# rounds, no race; (3) the torch anchor's hc_up rows, same call; (4) M 512 again, 48 rounds, over the
# three best; (5) ncu source-level stall sampling of one M 512 launch of 128_160_2.ovl1.
set -u
export PYTHONUNBUFFERED=1
B=bin/fused7; W=/tmp/f7; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
cp $B/call2.sh $o/
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; nproc; } > $o/env.txt 2>&1
# 1. TestHopperFused, hc_up_wgmma only
(cd backend/cuda && TILEFIT_OUT=$o TILEFIT_FUSED_ONLY=hc_up_wgmma timeout 45 $W/cuda.test -test.run '^TestHopperFused$' -test.v -test.count=1 > $o/hopper.log 2>&1; echo "hopper exit $?" >> $o/hopper.log)
grep -E "ovl" $o/hopper.log | grep -E "CTAs per SM|compiler" | head -12; grep -E "^(--- |ok|FAIL|PASS)|hopper exit|Error|DIFFERS|error" $o/hopper.log | head -20; pack hopper
# 2. paired sweep
HC=128_160_2,128_160_2.ovl1,128_160_2.ovl2,128_128_2.ovl1,128_128_2.ovl2,128_128_2.pingpong1,128_160_2.xres5,128_160_2.hbuf2.hpre1.ovl1,64_160_1.ovl1,hc_up_f16/32_128_4
timeout 50 $t sweep --backend cuda --workload strata --family hc_up_wgmma,hc_up_f16 --tiles $HC --m 256,512,1024,2048 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $?" >> $o/hc.err; cp $W/hc.db $o/hc.db 2>/dev/null; gzip -9 $o/hc.db
grep -E "^(ALL|NOT|BATCH)" $o/hc.md; tail -2 $o/hc.err; grep -E "^\| hc_up \| S" $o/hc.md | cut -c1-200; pack hc
# 3. the torch anchor's hc_up rows, same call
timeout 40 python3 $B/torch_hc.py --m 256,512,1024,2048 --secs 0.4 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; tail -9 $o/torch.txt; pack torch
# 4. M 512 again, 48 rounds
HC5=${HC5:-128_160_2,128_160_2.ovl1,128_160_2.ovl2,128_128_2.ovl1,128_128_2.pingpong1}
timeout 25 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $HC5 --m 512 --rounds 48 --race=false --vendor=false --db $W/hc512.db > $o/hc512.md 2> $o/hc512.err
echo "hc512 exit $?" >> $o/hc512.err; cp $W/hc512.db $o/hc512.db 2>/dev/null; gzip -9 $o/hc512.db; tail -2 $o/hc512.err; grep -E "^\| hc_up \| S" $o/hc512.md | cut -c1-200; pack hc512
# 5. ncu source-level stall sampling of one M 512 launch
NCU=$(which ncu 2>/dev/null || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for tl in 128_160_2.ovl1; do
  timeout 30 $NCU --target-processes all --graph-profiling node -k regex:hc_up_wgmma --launch-skip 3 --launch-count 1 --import-source yes \
    --section SpeedOfLight --section SourceCounters --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis -o $W/o/ncu-$tl \
    $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $tl --m 512 --rounds 2 --race=false --vendor=false --aa=false --isolate=false --report=false --db $W/ncu-$tl.db > $o/ncu-$tl.log 2>&1
  echo "ncu exit $?" >> $o/ncu-$tl.log
  timeout 15 $NCU -i $W/o/ncu-$tl.ncu-rep --page details > $o/ncu-$tl.txt 2>&1
  timeout 15 $NCU -i $W/o/ncu-$tl.ncu-rep --page source --csv --print-source sass > $o/ncu-$tl-sass.csv 2> $o/ncu-$tl-sass.err
  grep -E "Duration|Eligible|Issued Warp|DRAM Through|L2 Cache Through" $o/ncu-$tl.txt | head -8
  pack ncu-$tl
done
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
