#!/bin/bash
# decode8's sixth H200 call: WPRE (hc_up_wgmma's and swiglu_wgmma's PDL 2 with only the first n
# stages' weights before the wait, gemm_decode's PRE on the shared mainloop). Binaries built at the
# commit named in README.md into bin/d8 (tilefit, cuda.test) with unxz.py, wpre.py, the torch anchor
# (../shared/anchors/torch_fused.py) and this script beside them; run from the repository root,
# carrying bin/d8:  bash bin/d8/call6.sh
# Steps: (1) TestHopperFused for hc_up_wgmma and swiglu_wgmma (the WPRE tiles bitwise against the
# mma.sync references); (2) hc_up over the strata M, the constant-weights tiles beside their WPRE
# twins, 24 rounds; (3) SwiGLU the same; (4) the torch anchor in the same call; (5) the tables.
set -u
export PYTHONUNBUFFERED=1
B=bin/d8; W=/tmp/d8; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
for b in tilefit cuda.test; do python3 $B/unxz.py $B/$b.xz $W/$b && chmod +x $W/$b; done
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
for f in hc_up_wgmma swiglu_wgmma; do
  (cd backend/cuda && TILEFIT_OUT=$o TILEFIT_FUSED_ONLY=$f timeout 100 $W/cuda.test -test.run '^TestHopperFused$' -test.v -test.count=1 > $o/hopper-$f.log 2>&1; echo "hopper exit $?" >> $o/hopper-$f.log)
  grep -E "wpre" $o/hopper-$f.log | head -8; grep -E "^(--- |ok|FAIL|PASS)|hopper exit|DIFFERS" $o/hopper-$f.log | head -6
done
gzip -9 $o/hopper-*.log; pack hopper
HC=128_160_2,128_128_2.pingpong1.pdl2,128_128_2.pingpong1.pdl2.wpre1,128_128_2.pingpong1.pdl2.wpre2,128_128_2.pingpong1.pdl2.wpre4,128_128_2.pdl2.epi1,128_128_2.pdl2.epi1.wpre1,128_128_2.pdl2.epi1.wpre2,128_160_2.pdl2,128_160_2.pdl2.wpre1,128_160_2.pdl2.wpre2
timeout 150 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $HC --m 256,512,1024,1983,2048 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $?" >> $o/hc.err; grep -E "^(ALL|NOT|BATCH)" $o/hc.md; tail -2 $o/hc.err; cp $W/hc.db $o/; gzip -9 $o/hc.db; pack hc
SW=128_160_2.pdl1,128_160_2.pdl2,128_160_2.pdl2.wpre1,128_160_2.pdl2.wpre2,128_160_2.pdl1.epi1,128_160_2.pdl2.epi1,128_160_2.pdl2.epi1.wpre1,64_80_1.ksplit20.pdl1,64_80_1.ksplit20.pdl2,64_80_1.ksplit20.pdl2.wpre1
timeout 120 $t sweep --backend cuda --workload strata --family swiglu_wgmma --tiles $SW --m 256,512,1024,1983,2048 --rounds 24 --race=false --vendor=false --db $W/sw.db > $o/sw.md 2> $o/sw.err
echo "sw exit $?" >> $o/sw.err; grep -E "^(ALL|NOT|BATCH)" $o/sw.md; tail -2 $o/sw.err; cp $W/sw.db $o/; gzip -9 $o/sw.db; pack sw
timeout 110 python3 $B/torch_fused.py --m 256,512,1024,1983,2048 --secs 0.6 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; tail -4 $o/torch.txt; pack torch
python3 $B/wpre.py $W/hc.db $o/torch.json hc_up > $o/hc-table.txt 2>&1; cat $o/hc-table.txt
python3 $B/wpre.py $W/sw.db $o/torch.json swiglu > $o/sw-table.txt 2>&1; cat $o/sw-table.txt
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
