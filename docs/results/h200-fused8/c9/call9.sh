#!/bin/bash
# lead call 9: PINGPONG with 160-column tiles for hc_up (128_160_2.pingpong1: each consumer a whole 128x160
# tile, 160 fp32 accumulators, WG_MAX_ACC 160). (1) nvcc -Xptxas -v of the tool's source: advisories,
# registers, spills, wgmma waits; (2) TestHopperFused for hc_up_wgmma; (3) paired sweep at the strata M,
# 24 rounds; (4) the torch anchor, same call. Run: bash bin/lead/call9.sh, carry bin/lead.
set -u
export PYTHONUNBUFFERED=1
B=bin/lead; W=/tmp/l9; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
xz -dc $B/tilefit.xz > $W/tilefit && chmod +x $W/tilefit
xz -dc $B/cuda.test.xz > $W/cuda.test && chmod +x $W/cuda.test
cp $B/call9.sh $o/; t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
while read fam tile defs; do
  nvcc -arch=sm_90a -cubin -std=c++17 -Xptxas -v -o $W/$tile.cubin $B/pp/$fam.cu $defs > $o/nvcc-$tile.log 2>&1
  cuobjdump -sass $W/$tile.cubin > $W/$tile.sass
  echo "$tile: $(grep -h 'C75\|Used\|spill' $o/nvcc-$tile.log | tr '\n' ' ') HGMMA $(grep -c HGMMA $W/$tile.sass) DEPBAR $(grep -o 'DEPBAR.LE gsb0, 0x[0-9]' $W/$tile.sass | sort | uniq -c | tr -s ' ' | tr '\n' ';')" | tee -a $o/nvcc.txt
done < $B/pp/defs.txt
(cd backend/cuda && TILEFIT_OUT=$o TILEFIT_FUSED_ONLY=hc_up_wgmma timeout 60 $W/cuda.test -test.run '^TestHopperFused$' -test.v -test.count=1 > $o/hopper.log 2>&1; echo "hopper exit $?" >> $o/hopper.log)
grep -E '^(--- |ok|FAIL|PASS)|hopper exit' $o/hopper.log | head; grep -h "128_160_2.pingpong1" $o/hopper-fused.log | head -4; pack hopper
HC=128_160_2,128_160_2.pingpong1,128_160_2.pingpong1.pdl1,128_128_2.pingpong1,128_128_2.epi1
timeout 60 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $HC --m 256,512,1024,1983,2048 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $?" >> $o/hc.err; cp $W/hc.db $o/hc.db 2>/dev/null; gzip -9 $o/hc.db
grep -E "^(ALL|NOT|BATCH)" $o/hc.md; tail -2 $o/hc.err; pack hc
timeout 40 python3 $B/torch_hc.py --m 256,512,1024,1983,2048 --secs 0.4 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; tail -11 $o/torch.txt
echo "done t=$(el)s"; pack end
