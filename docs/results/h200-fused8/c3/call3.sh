#!/bin/bash
# lead call 3: OVL with the explicit wait at the consumer's exit (no C7518): bitwise test, SASS check,
# paired sweep at the strata M, torch anchor in the same call. Run: bash bin/lead/call3.sh, carry bin/lead.
set -u
export PYTHONUNBUFFERED=1
B=bin/lead; W=/tmp/l3; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
xz -dc $B/tilefit.xz > $W/tilefit && chmod +x $W/tilefit
xz -dc $B/cuda.test.xz > $W/cuda.test && chmod +x $W/cuda.test
cp $B/call3.sh $o/; t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
(cd backend/cuda && TILEFIT_OUT=$o TILEFIT_FUSED_ONLY=hc_up_wgmma timeout 60 $W/cuda.test -test.run '^TestHopperFused$' -test.v -test.count=1 > $o/hopper.log 2>&1; echo "hopper exit $?" >> $o/hopper.log)
grep -E "^(--- |ok|FAIL|PASS)|hopper exit|DIFFERS" $o/hopper.log | head -12; pack hopper
HC=128_160_2,128_160_2.ovl1,128_160_2.ovl2,128_128_2.ovl1,128_128_2.ovl2,128_128_2.pingpong1,128_128_2.epi1,64_160_1.ovl1,hc_up_f16/32_128_4
timeout 70 $t sweep --backend cuda --workload strata --family hc_up_wgmma,hc_up_f16 --tiles $HC --m 256,512,1024,1983,2048 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $?" >> $o/hc.err; cp $W/hc.db $o/hc.db 2>/dev/null; gzip -9 $o/hc.db
grep -E "^(ALL|NOT|BATCH)" $o/hc.md; tail -1 $o/hc.err; pack hc
timeout 40 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles 128_160_2,128_160_2.ovl1,128_160_2.ovl2,128_128_2.pingpong1 --m 512 --rounds 48 --race=false --vendor=false --db $W/hc512.db > $o/hc512.md 2> $o/hc512.err
echo "hc512 exit $?" >> $o/hc512.err; cp $W/hc512.db $o/hc512.db 2>/dev/null; gzip -9 $o/hc512.db; pack hc512
timeout 40 python3 $B/torch_hc.py --m 256,512,1024,1983,2048 --secs 0.4 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; tail -7 $o/torch.txt
echo "done t=$(el)s"; pack end
