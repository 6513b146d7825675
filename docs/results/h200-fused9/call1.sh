#!/bin/bash
# fused9's first H200 call (issue 16, hc_up at M 512: PDL 2, the first stages' W copied before
# griddepcontrol.wait). Binaries built at the commit named in README.md:
#   CGO_ENABLED=0 go build -ldflags=-s -o bin/f9/tilefit ./cmd/tilefit
#   CGO_ENABLED=0 go test -c -ldflags=-s -o bin/f9/cuda.test ./backend/cuda
#   xz -9e bin/f9/tilefit bin/f9/cuda.test
#   cp ../shared/anchors/torch_fused.py docs/results/h200-fused6/torch_hc.py docs/results/h200-decode6/unxz.py docs/results/h200-fused9/call1.sh bin/f9/
# run from the repository root, carrying bin/f9:  bash bin/f9/call1.sh
# Steps: (1) TestHopperFused for hc_up_wgmma only (the PDL 2 tiles bitwise against hc_up_f16's
# mma.sync tile); (2) hc_up over the strata M, 24 rounds, every tile every round; (3) the torch
# anchor's hc_up rows; (4) M 512 again, 24 rounds. Packs $OUT/c.tgz after every step.
set -u
export PYTHONUNBUFFERED=1
B=bin/f9; W=/tmp/f9; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
python3 $B/unxz.py $B/tilefit.xz $W/tilefit && chmod +x $W/tilefit
python3 $B/unxz.py $B/cuda.test.xz $W/cuda.test && chmod +x $W/cuda.test
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; nproc; } > $o/env.txt 2>&1
# 1. TestHopperFused, hc_up_wgmma only
(cd backend/cuda && TILEFIT_OUT=$o TILEFIT_FUSED_ONLY=hc_up_wgmma timeout 90 $W/cuda.test -test.run '^TestHopperFused$' -test.v -test.count=1 > $o/hopper.log 2>&1; echo "hopper exit $?" >> $o/hopper.log)
grep -E "pdl2" $o/hopper.log | head -12; grep -E "^(--- |ok|FAIL|PASS)|hopper exit|Error|DIFFERS" $o/hopper.log | head -12; pack hopper
# 2. hc_up over the strata M, 24 rounds, every tile every round
HC=${HC:-128_160_2,128_160_2.pdl1,128_160_2.pdl2,128_160_2.group16.pdl2,128_160_2.hring1.pdl2,128_128_2.pingpong1,128_128_2.pingpong1.pdl1,128_128_2.pingpong1.pdl2,128_128_2.epi1,128_128_2.epi1.pdl2,128_128_2.hring1.pdl2}
timeout 100 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $HC --m 256,512,1024,1983,2048 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $?" >> $o/hc.err; cp $W/hc.db $o/hc.db 2>/dev/null; gzip -9 $o/hc.db
grep -E "^(ALL|NOT|BATCH)" $o/hc.md; tail -2 $o/hc.err; pack hc
# 3. the torch anchor's hc_up rows, same call
timeout 40 python3 $B/torch_hc.py --m 256,512,1024,1983,2048 --secs 0.6 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; tail -12 $o/torch.txt; pack torch
# 4. M 512 again
HC5=${HC5:-128_160_2,128_160_2.pdl1,128_160_2.pdl2,128_160_2.group16.pdl2,128_160_2.hring1.pdl2,128_128_2.pingpong1.pdl2}
timeout 40 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $HC5 --m 512 --rounds 24 --race=false --vendor=false --db $W/hc512.db > $o/hc512.md 2> $o/hc512.err
echo "hc512 exit $?" >> $o/hc512.err; cp $W/hc512.db $o/hc512.db 2>/dev/null; gzip -9 $o/hc512.db; tail -2 $o/hc512.err; pack hc512
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
