#!/bin/bash
# lead call 5 (commit 6914261): (1) the device conformance tests of every wgmma/decode/q8 family after the
# core refactor and the OVL exit wait; (2) hc_up M 256/512/1024: 128_160_2's walk and ring variants, 24
# rounds, paired; (3) the torch anchor's hc_up rows, same call. Run: bash bin/lead/call5.sh, carry bin/lead.
set -u
export PYTHONUNBUFFERED=1
B=bin/lead; W=/tmp/l5; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
xz -dc $B/tilefit.xz > $W/tilefit && chmod +x $W/tilefit
xz -dc $B/cuda.test.xz > $W/cuda.test && chmod +x $W/cuda.test
cp $B/call5.sh $o/; t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
(cd backend/cuda && timeout 300 $W/cuda.test -test.run 'TestWgmma|TestHopper|TestDecode|TestGemmQ8' -test.count=1 -test.v > $o/tests.log 2>&1; echo "rc=$?" >> $o/tests.log)
grep -E '^(--- |PASS|FAIL|ok|rc=)' $o/tests.log | tail -40; pack tests
HC=128_160_2,128_160_2.grid128,128_160_2.raster1,128_160_2.group1,128_160_2.group2,128_160_2.group4,128_160_2.group16,128_160_2.raster1.group1,128_160_2.raster1.group4,128_160_2.stages4,128_160_2.pdl1,128_160_2.hsw0,128_160_2.hbuf2.hpre1,128_160_2.grid128.pdl1,128_128_2.pingpong1,128_128_2.pingpong1.pdl1,128_128_2.pingpong1.grid128
timeout 90 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $HC --m 256,512,1024 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $?" >> $o/hc.err; cp $W/hc.db $o/hc.db 2>/dev/null; gzip -9 $o/hc.db
grep -E "^(ALL|NOT|BATCH)" $o/hc.md; tail -2 $o/hc.err; pack hc
timeout 40 python3 $B/torch_hc.py --m 256,512,1024 --secs 0.4 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; tail -7 $o/torch.txt
echo "done t=$(el)s"; pack end
