#!/bin/bash
# compile-only: ptxas advisories and SASS wgmma waits for hc_up_wgmma variants
# (call 1, run as bash bin/lead/c1/call.sh with carry bin/lead; v0.cu = `tilefit families --backend cuda
# source hc_up_wgmma` at 2623f8c, v2.cu / v3.cu its variants described in ../README.md, defs.txt the
# defines of each tile as the sweep compiles it)
cd "$(dirname "$0")"
nvcc --version | tail -2 > $OUT/nvcc.txt
comp() { # name src defines...
  local name=$1 src=$2; shift 2
  nvcc -arch=sm_90a -cubin -std=c++17 -Xptxas -v -o $OUT/$name.cubin $src "$@" > $OUT/$name.log 2>&1
  echo "== $name rc=$?" >> $OUT/summary.txt
  grep -E "C75|registers|spill" $OUT/$name.log >> $OUT/summary.txt
  cuobjdump -sass $OUT/$name.cubin > $OUT/$name.sass 2>&1
  echo "HGMMA $(grep -c HGMMA $OUT/$name.sass)  DEPBAR: $(grep -o 'WARPGROUP.DEPBAR.LE gsb0, 0x[0-9]' $OUT/$name.sass | sort | uniq -c | tr '\n' ';')  ARRIVES $(grep -c 'WARPGROUP.ARRIVE' $OUT/$name.sass)" >> $OUT/summary.txt
}
while read tile defs; do
  comp "v0_$tile" v0.cu $defs &
done < defs.txt
wait
d=$(grep '^128_160_2.ovl1 ' defs.txt | cut -d' ' -f2-)
comp v2_128_160_2.ovl1 v2.cu $d &
comp v3_128_160_2.ovl1 v3.cu $d &
wait
cat $OUT/summary.txt
gzip -q $OUT/*.sass; rm -f $OUT/*.cubin
