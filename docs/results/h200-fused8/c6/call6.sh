#!/bin/bash
# lead call 6: (1) TestHopperFused for hc_up_wgmma (now logs how many 2-CTA clusters of each MC tile fit at once,
# cuOccupancyMaxActiveClusters); (2) hc_up M 256/512/1024: MC tiles with GRID 132 (66 clusters) and 128 (64), 24
# rounds, paired; (3) the torch anchor, same call. Run: bash bin/lead/call6.sh, carry bin/lead.
set -u
export PYTHONUNBUFFERED=1
B=bin/lead; W=/tmp/l6; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
xz -dc $B/tilefit.xz > $W/tilefit && chmod +x $W/tilefit
xz -dc $B/cuda.test.xz > $W/cuda.test && chmod +x $W/cuda.test
cp $B/call6.sh $o/; t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
(cd backend/cuda && TILEFIT_OUT=$o TILEFIT_FUSED_ONLY=hc_up_wgmma timeout 60 $W/cuda.test -test.run '^TestHopperFused$' -test.v -test.count=1 > $o/hopper.log 2>&1; echo "hopper exit $?" >> $o/hopper.log)
grep -E '^(--- |ok|FAIL|PASS)|hopper exit' $o/hopper.log | head; grep -h 'clusters of' $o/hopper.log $o/hopper-fused.log 2>/dev/null | sort -u | head -20; pack hopper
HC=128_160_2,128_160_2.grid128,128_160_2.mc1,128_160_2.mc2,128_160_2.grid128.mc1,128_160_2.grid128.mc2,128_128_2.pingpong1,128_128_2.pingpong1.mc1,128_128_2.pingpong1.grid128.mc1,128_128_2.mc1,128_128_2.grid128.mc1
timeout 90 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $HC --m 256,512,1024 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $?" >> $o/hc.err; cp $W/hc.db $o/hc.db 2>/dev/null; gzip -9 $o/hc.db
grep -E "^(ALL|NOT|BATCH)" $o/hc.md; tail -2 $o/hc.err; pack hc
timeout 40 python3 $B/torch_hc.py --m 256,512,1024 --secs 0.4 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; tail -7 $o/torch.txt
echo "done t=$(el)s"; pack end
