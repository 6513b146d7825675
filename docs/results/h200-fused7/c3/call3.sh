#!/bin/bash
# fused7's third H200 call: OVL with the next accumulator set zeroed after wait_group 0 (commit 8368ddf),
# carried in bin/fused7; run from the repository root: bash bin/fused7/call3.sh. Steps: (1) TestHopperFused
# for hc_up_wgmma only; (2) ncu of one M 512 launch of 128_160_2.ovl1: its SASS (are the wgmma still
# serialised?); (3) one paired sweep at M 256/512/1024, 24 rounds, no race; (4) the torch anchor's hc_up
# rows at M 256/512/1024, same call.
set -u
export PYTHONUNBUFFERED=1
B=bin/fused7; W=/tmp/f7; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
cp $B/call3.sh $o/
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; nproc; } > $o/env.txt 2>&1
(cd backend/cuda && TILEFIT_OUT=$o TILEFIT_FUSED_ONLY=hc_up_wgmma timeout 40 $W/cuda.test -test.run '^TestHopperFused$' -test.v -test.count=1 > $o/hopper.log 2>&1; echo "hopper exit $?" >> $o/hopper.log)
grep -E "^(--- |ok|FAIL|PASS)|hopper exit|DIFFERS" $o/hopper.log | head -12; pack hopper
NCU=$(which ncu 2>/dev/null || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
tl=128_160_2.ovl1
timeout 25 $NCU --target-processes all --graph-profiling node -k regex:hc_up_wgmma --launch-skip 3 --launch-count 1 --import-source yes \
  --section SpeedOfLight --section SourceCounters --section WarpStateStats -o $W/o/ncu-$tl \
  $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $tl --m 512 --rounds 2 --race=false --vendor=false --aa=false --isolate=false --report=false --db $W/ncu.db > $o/ncu-$tl.log 2>&1
echo "ncu exit $?" >> $o/ncu-$tl.log
timeout 10 $NCU -i $W/o/ncu-$tl.ncu-rep --page source --csv --print-source sass > $o/ncu-$tl-sass.csv 2> $o/ncu-$tl-sass.err
echo "HGMMA $(grep -c HGMMA $o/ncu-$tl-sass.csv) DEPBAR0 $(grep -c 'DEPBAR.LE gsb0, 0x0' $o/ncu-$tl-sass.csv) DEPBAR1 $(grep -c 'DEPBAR.LE gsb0, 0x1' $o/ncu-$tl-sass.csv)"; pack ncu
HC=128_160_2,128_160_2.ovl1,128_160_2.ovl2,128_128_2.ovl1,128_128_2.pingpong1,hc_up_f16/32_128_4
timeout 35 $t sweep --backend cuda --workload strata --family hc_up_wgmma,hc_up_f16 --tiles $HC --m 256,512,1024 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $?" >> $o/hc.err; cp $W/hc.db $o/hc.db 2>/dev/null; gzip -9 $o/hc.db
grep -E "^(ALL|NOT|BATCH)" $o/hc.md; tail -1 $o/hc.err; grep -E "^\| hc_up \| S" $o/hc.md | cut -c1-220; pack hc
timeout 30 python3 $B/torch_hc.py --m 256,512,1024 --secs 0.4 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; tail -7 $o/torch.txt
echo "done t=$(el)s"; pack end
