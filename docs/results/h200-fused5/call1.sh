#!/bin/bash
# fused5 call 1 (issue 16, hc_up at M 512). Built on the development machine at the commit named in
# README.md:
#   mkdir -p /work/main/bin/fused5
#   CGO_ENABLED=0 go build -ldflags=-s -o /work/main/bin/fused5/tilefit ./cmd/tilefit
#   CGO_ENABLED=0 go test -c -ldflags=-s -o /work/main/bin/fused5/cuda.test ./backend/cuda
#   gzip -9 -f /work/main/bin/fused5/tilefit /work/main/bin/fused5/cuda.test
#   cp /work/shared/anchors/torch_fused.py docs/results/h200-fused5/call1.sh /work/main/bin/fused5/
# run on the H200 from the repository root, carrying bin/fused5:  bash bin/fused5/call1.sh
# Steps: (1) TestHopperFused (WATCHDOG=1: the new tiles bitwise with hc_up_f16's mma.sync tile, odd
# shapes, poisoned outputs); (2) the hc_up sweep over the strata M with the new tiles (24 rounds, no
# race); (3) the torch anchor; (4) SwiGLU at M 1983 over its candidates; (5) ncu of the M 512 tiles if
# ncu exists. Packs $OUT/c1.tgz after every step.
set -u
export PYTHONUNBUFFERED=1
B=bin/fused5; W=/tmp/f5; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c1.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; nproc; echo "ncu: $(which ncu)"; echo "nsys: $(which nsys)"; ls -d /usr/local/cuda*/bin 2>/dev/null; } > $o/env.txt 2>&1
cat $o/env.txt
# 1. the device test of the fused wgmma families (the new tiles included)
( cd backend/cuda && timeout 100 $W/cuda.test -test.run '^TestHopperFused$' -test.v > $o/hopper.log 2>&1; echo "hopper exit $?" >> $o/hopper.log )
tail -n 3 $o/hopper.log; grep -E "^\s+hopper_fused_test.go" $o/hopper.log | head -20; pack hopper
HC=128_160_2,128_128_2.pingpong1,128_160_2.hpf1,128_160_2.hring1,128_160_2.hring1.hpf1,128_160_2.mc1,128_160_2.hring1.mc1,128_160_2.mc2,128_128_2.pingpong1.hpf1,128_128_2.pingpong1.mc1,128_128_2.hring1,128_128_2.epi1,128_320_2,128_320_2.hpf1,128_320_2.hring1,128_320_2.hring1.hpf1,128_320_2.mc1,128_320_2.hring1.mc1,64_320_1.hring1,hc_up_f16/32_128_4
if ! grep -q "^--- PASS: TestHopperFused" $o/hopper.log; then
  # a failing new variant must not hang the sweep (no watchdog there): drop the ring tiles
  HC=$(echo $HC | tr , '\n' | grep -v hring | paste -sd,); echo "hopper test failed: sweeping $HC"
fi
# 2. hc_up over the strata M, the new tiles, 24 rounds, every tile every round
timeout 110 $t sweep --backend cuda --workload strata --out-type f16 --family hc_up_wgmma,hc_up_f16 --tiles $HC --m 256,512,1024,1983,2048 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $?" >> $o/hc.err; cp $W/hc.db $o/hc.db; gzip -9 $o/hc.db
grep -E "^(ALL|NOT|BATCH)" $o/hc.md; grep -E "^\| hc_up" $o/hc.md | head -8; pack hc
# 3. the torch anchor, same call
timeout 90 python3 $B/torch_fused.py --m 256,512,1024,1983,2048 --secs 0.6 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; grep -iE "hc_up|swiglu" $o/torch.txt | head -20; pack torch
# 4. SwiGLU at M 1983: the candidates near the cell's best (the first is the reference)
SW=128_160_2.pdl1,128_160_2.pdl1.epi1,128_160_2,128_160_2.epi1,128_128_2.pdl1,128_80_2.pdl1,128_160_2.ksplit20.pdl1,128_160_2.mc1.pdl1,128_160_2.mc2.pdl1,128_128_2.pingpong1.pdl1
timeout 45 $t sweep --backend cuda --workload strata --out-type f16 --family swiglu_wgmma --tiles $SW --m 1983 --rounds 24 --race=false --vendor=false --db $W/sw.db > $o/sw.md 2> $o/sw.err
echo "sw exit $?" >> $o/sw.err; grep -E "^\| swiglu" $o/sw.md | head -3; pack sw
# 5. ncu of the M 512 tiles, if the machine has it
NCU=$(which ncu 2>/dev/null || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
  for tl in 128_160_2 128_320_2.hring1; do
    timeout 35 $NCU --target-processes all -k regex:tilefit_hc_up_wgmma --launch-skip 30 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section WarpStateStats --section LaunchStats \
      $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $tl --m 512 --rounds 2 --race=false --vendor=false --aa=false --isolate=false --report=false --db $W/ncu-$tl.db > $o/ncu-$tl.txt 2>&1
    echo "ncu exit $?" >> $o/ncu-$tl.txt
  done
  pack ncu
fi
echo "done t=$(el)s"
