#!/bin/bash
# decode10's second H200 call: MB 8 variants (stages, ER, PRE, 16 warps; Wout with 12 to 18 stages) beside the
# constant-weights picks. Binaries built at the commit named in README.md into bin/d10 (tilefit, cuda.test)
# with unxz.py, pivot.py, the workloads and this script beside them; run from the repository root,
# carrying bin/d10:  bash bin/d10/call2.sh
# Steps: MB 8 tiles on sq4096 and Wout beside the constant-weights picks, 12 rounds, twice (v1.db,
# v2.db), each with the tool's copy bandwidth (call 1 ran the device tests with the same binaries).
set -u
B=bin/d10; W=/tmp/d10; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
for b in tilefit cuda.test; do python3 $B/unxz.py $B/$b.xz $W/$b && chmod +x $W/$b; done
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
S=tk128.stages
SQ4=32_8.${S}16.pdl2.ksplit16.kw4.lp2.xa1.er1,32_8.${S}20.pdl2.ksplit16.kw4.lp2.xa1.er1.mb8,32_8.${S}16.pdl2.ksplit16.kw4.lp2.xa1.er1.mb8,32_8.${S}20.pdl2.ksplit16.kw4.lp2.xa1.mb8,32_8.${S}20.pdl2.ksplit16.kw4.lp2.xa1.er1.pre8.mb8,32_16.${S}20.pdl2.ksplit16.kw4.lp2.xa1.er1.mb8,64_8.${S}10.pdl2.ksplit16.kw2.kc2.lp2.xa1.er1.rv1.mb8,64_8.${S}10.pdl2.ksplit16.kw2.kc2.lp2.xa1.er1.rv1
WO=40_10.${S}12.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1,40_10.${S}12.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1.mb8,40_10.${S}14.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1.mb8,40_10.${S}16.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1.mb8,40_10.${S}18.pdl2.ksplit24.kw2.kc2.lp2.xa1.er1.pre8.mb8
for r in 1 2; do
for s in sq4096:$SQ4 wout:$WO; do
  n=${s%%:*}; tl=${s#*:}
  timeout 120 $t sweep --backend cuda --workload $B/$n.yaml --family gemm_decode --tiles "$(pre $tl)" --out-type f16 --rounds 12 --vendor=false --db $W/v$r.db > $o/v$r-$n.md 2> $o/v$r-$n.err
  echo "$n exit $? t=$(el)"; grep -E "^(ALL|NOT|BATCH)" $o/v$r-$n.md; tail -1 $o/v$r-$n.err
done
timeout 15 $t devices --backend cuda --measure --db $W/v$r.db > $o/devices-v$r.txt 2>&1
python3 $B/pivot.py $W/v$r.db > $o/pivot-v$r.txt 2>&1; cut -c1-150 $o/pivot-v$r.txt
cp $W/v$r.db $o/; gzip -9 $o/v$r.db; pack v$r
done
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
