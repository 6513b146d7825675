#!/bin/bash
# decode8's second H200 call: a diagnostic of PDL 2. bin/d8/tilefit is built at the commit named in
# README.md; bin/d8/tilefit-xe is the same tree with xe-diagnostic.patch applied (under PDL 2 the
# first fill's X boxes are copied before griddepcontrol.wait as well, with its W; valid here only
# because the sweep never writes X between calls). Both sweep the same PDL 1 / PDL 2 tiles of
# sq4096 and Wout, in the order base, xe, base, xe, each into its own database and compile cache.
# Run from the repository root, carrying bin/d8:  bash bin/d8/call2.sh
set -u
B=bin/d8; W=/tmp/d8; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
for b in tilefit tilefit-xe; do python3 $B/unxz.py $B/$b.xz $W/$b && chmod +x $W/$b; done
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
D=32_8.tk128.stages16.ksplit16.kw4.lp2; C=64_8.tk128.stages10.ksplit16.kw2.kc2.lp2; P=64_4.tk128.stages8.lp2
SQ4=$D.pdl1,$D.pdl2,$D.pdl2.pre1,$D.pdl2.pre4,$D.pdl2.pre8,32_8.stages8.pdl2.ksplit16.kw4.lp2,$C.pdl1,$C.pdl2
T=40_10.tk128.ksplit24.kw2.kc2.lp2
WO=$T.stages8.pdl1,$T.stages8.pdl2,$T.stages8.pdl2.pre4,$T.stages14.pdl2,$T.stages12.pdl2
SQ8=$P.pdl1,$P.pdl2,$P.pdl2.pre1
for r in 1 2; do
  for b in tilefit tilefit-xe; do
    for s in sq4096:$SQ4 wout:$WO sq8192:$SQ8; do
      n=${s%%:*}; tl=${s#*:}
      XDG_CACHE_HOME=$W/cache-$b timeout 90 $W/$b sweep --backend cuda --workload $B/$n.yaml --family gemm_decode --tiles "$(pre $tl)" --out-type f16 --rounds 12 --vendor=false --db $W/$b-$r.db > $o/$b-$r-$n.md 2> $o/$b-$r-$n.err
      echo "$b $r $n exit $?"; grep -E "^(ALL|NOT)" $o/$b-$r-$n.md
    done
    python3 $B/pivot.py $W/$b-$r.db > $o/pivot-$b-$r.txt 2>&1
    cp $W/$b-$r.db $o/; gzip -9 $o/$b-$r.db
  done
  pack round$r
done
XDG_CACHE_HOME=$W/cache-tilefit timeout 15 $W/tilefit devices --backend cuda --measure --db $W/dev.db > $o/devices.txt 2>&1
for f in $o/pivot-*; do echo "== $f"; cut -c1-120 $f; done
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
