#!/bin/bash
# decode8's first H200 call (issue 16 item 7): gemm_decode tiles small enough for two (or four) CTAs
# per SM, with PDL 1 and PDL 2, beside each shape's current constant-weights pick. The read ceiling
# of h200-decode6 reached 94-97 % of copy_gbps only with several CTAs per SM and a preloaded ring;
# every PDL 2 tile measured so far held one CTA per SM. Binaries built at the commit named in
# README.md into bin/d8 with unxz.py, pivot.py, the workloads and this script beside them; run from
# the repository root, carrying bin/d8:  bash bin/d8/call1.sh
set -u
B=bin/d8; W=/tmp/d8; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
python3 $B/unxz.py $B/tilefit.xz $W/tilefit && chmod +x $W/tilefit
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; nproc; } > $o/env.txt 2>&1
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
SQ4=${SQ4:-32_8.tk128.stages16.pdl2.ksplit16.kw4.lp2.pre1,32_8.tk128.stages16.pdl1.ksplit16.kw4.lp2,16_4.tk128.stages12.ksplit16.kw2.lp2.pdl1,16_4.tk128.stages12.ksplit16.kw2.lp2.pdl2,32_8.tk128.stages8.ksplit16.kw2.kc2.lp2.pdl1,32_8.tk128.stages8.ksplit16.kw2.kc2.lp2.pdl2,32_8.tk128.stages8.ksplit16.kw2.kc2.lp2.pdl2.pre4,32_4.tk128.stages8.ksplit16.kc2.lp2.pdl2,16_2.stages6.lp2.pdl1,16_2.stages6.lp2.pdl2,16_2.tk128.stages12.lp2.pdl2,8_1.tk128.stages8.lp2.pdl1,8_1.tk128.stages8.lp2.pdl2}
WO=${WO:-40_10.tk128.stages8.pdl2.ksplit24.kw2.kc2.lp2.pre4,40_10.tk128.stages8.pdl1.ksplit24.kw2.kc2.lp2,40_5.tk128.stages6.ksplit24.kc4.lp2.pdl1,40_5.tk128.stages6.ksplit24.kc4.lp2.pdl2,16_4.tk128.stages12.ksplit24.kw2.kc2.lp2.pdl1,16_4.tk128.stages12.ksplit24.kw2.kc2.lp2.pdl2,16_2.tk256.stages6.ksplit24.kc2.lp2.pdl2,32_8.tk128.stages8.ksplit16.kw2.kc3.lp2.pdl2,40_10.tk128.stages6.ksplit16.kw2.kc3.lp2.pdl2,8_1.tk128.stages8.lp2.pdl2}
dsweep() { # name workload tiles
  timeout ${DT:-120} $t sweep --backend cuda --workload $2 --family gemm_decode --tiles "$3" --out-type f16 --rounds 12 --vendor=false --db $W/dec.db > $o/$1.md 2> $o/$1.err
  echo "$1 exit $?" >> $o/$1.err; tail -1 $o/$1.err; grep -E "^(ALL|NOT|BATCH)" $o/$1.md
}
dsweep sq4096 $B/sq4096.yaml "$(pre $SQ4)"; pack sq4096
dsweep wout $B/wout.yaml "$(pre $WO)"; pack wout
timeout 15 $t devices --backend cuda --measure --db $W/dec.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
python3 $B/pivot.py $W/dec.db > $o/pivot.txt 2>&1; cat $o/pivot.txt | cut -c1-150
cp $W/dec.db $o/dec.db; gzip -9 $o/dec.db
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
