#!/bin/bash
# decode9's first H200 call: gemm_decode XS (X in its own cp.async slots, the ring's stages W alone)
# and a screen of hc_up_wgmma tiles at M 512. Binaries built at the commit named in README.md into
# bin/d9 (tilefit, cuda.test) with unxz.py, pivot.py, wpre.py, the workloads, the torch anchor and this
# script beside them; run from the repository root, carrying bin/d9:  bash bin/d9/call1.sh
# Steps: (1) the decode device tests (TestDecode*, WATCHDOG 1, the XS cases among them); (2) XS tiles on
# sq4096, Wout and sq8192 beside the constant-weights picks, 12 rounds, and the tool's copy bandwidth;
# (3) hc_up_wgmma tiles with PDL 2 at M 512, 24 rounds, and the torch anchor at M 512.
set -u
export PYTHONUNBUFFERED=1
B=bin/d9; W=/tmp/d9; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
for b in tilefit cuda.test; do python3 $B/unxz.py $B/$b.xz $W/$b && chmod +x $W/$b; done
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
(cd backend/cuda && TILEFIT_OUT=$o timeout 200 $W/cuda.test -test.run '^TestDecode' -test.v -test.count=1 > $o/dtests.log 2>&1; echo "dtests exit $?" >> $o/dtests.log)
grep -E "^(--- |ok|FAIL|PASS)|exit|differ|panic" $o/dtests.log | head -20; gzip -9 $o/dtests.log; pack dtests
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
SQ4=32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.xa1,32_8.tk128.stages20.pdl2.ksplit16.kw4.lp2.xs2,32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.xs2,32_8.tk128.stages24.pdl2.ksplit16.kw2.lp2.xs2,64_8.tk128.stages12.pdl2.ksplit16.kw2.kc2.lp2.xs2,64_8.tk128.stages10.pdl2.ksplit16.kw2.kc2.lp2.xa1,32_8.tk128.stages20.pdl2.ksplit16.kw4.lp2.xs3,32_8.tk256.stages10.pdl2.ksplit16.kw2.lp2.xs2,32_8.tk128.stages20.pdl1.ksplit16.kw4.lp2.xs2,32_8.tk128.stages16.pdl1.ksplit16.kw4.lp2
WO=40_10.tk128.stages8.pdl2.ksplit24.kw2.kc2.lp2.pre4,40_10.tk128.stages12.pdl2.ksplit24.kw2.kc2.lp2.xa1,40_10.tk128.stages18.pdl2.ksplit24.kw2.kc2.lp2.xs2,40_10.tk128.stages16.pdl2.ksplit24.kw2.kc2.lp2.xs2,40_10.tk128.stages18.pdl2.ksplit24.kw2.kc2.lp2.xs3,40_10.tk128.stages18.pdl1.ksplit24.kw2.kc2.lp2.xs2,40_10.tk128.stages8.pdl1.ksplit24.kw2.kc2.lp2
S8=64_4.tk128.stages8.pdl2.lp2,64_4.tk128.stages12.pdl2.lp2.xs2,64_4.tk128.stages12.pdl1.lp2.xs2,64_4.tk128.stages8.pdl1.lp2
for s in sq4096:$SQ4 wout:$WO sq8192:$S8; do
  n=${s%%:*}; tl=${s#*:}
  timeout 100 $t sweep --backend cuda --workload $B/$n.yaml --family gemm_decode --tiles "$(pre $tl)" --out-type f16 --rounds 12 --vendor=false --db $W/xs.db > $o/xs-$n.md 2> $o/xs-$n.err
  echo "$n exit $? t=$(el)"; grep -E "^(ALL|NOT|BATCH)" $o/xs-$n.md; tail -1 $o/xs-$n.err
done
timeout 15 $t devices --backend cuda --measure --db $W/xs.db > $o/devices-xs.txt 2>&1
python3 $B/pivot.py $W/xs.db > $o/pivot-xs.txt 2>&1; cut -c1-130 $o/pivot-xs.txt
cp $W/xs.db $o/; gzip -9 $o/xs.db; pack xs
HC=128_128_2.pingpong1.pdl2,128_64_2.pingpong1.pdl2,128_96_2.pingpong1.pdl2,128_192_2.pdl2,128_224_2.pdl2,128_64_2.pdl2,128_96_2.pdl2,128_128_2.pingpong1.grid128.pdl2,128_128_2.pingpong1.grid0.pdl2,64_128_1.pdl2,64_64_1.pdl2,128_128_2.pingpong1.group4.pdl2,128_128_2.pingpong1.group16.pdl2,256_128_2.pdl2,128_160_2.pdl2
timeout 150 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $HC --m 512 --rounds 24 --race=false --vendor=false --db $W/hc.db > $o/hc.md 2> $o/hc.err
echo "hc exit $? t=$(el)" >> $o/hc.err; grep -E "^(ALL|NOT|BATCH)" $o/hc.md; tail -2 $o/hc.err; cp $W/hc.db $o/; gzip -9 $o/hc.db; pack hc
timeout 80 python3 $B/torch_fused.py --m 512 --secs 0.6 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; tail -4 $o/torch.txt
python3 $B/wpre.py $W/hc.db $o/torch.json hc_up > $o/hc-table.txt 2>&1; cat $o/hc-table.txt
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
