#!/bin/bash
# lead call 4 (compile only): the core's k-block/zero/settle refactor must leave every wgmma family's SASS
# unchanged: compile 72 tiles of gemm_wgmma, hc_up_wgmma, swiglu_wgmma, gemm_q8_wgmma from the sources of
# commit 'mid' (the OVL fix) and 'after' (the refactor) with nvcc -arch=sm_90a -cubin, compare cuobjdump -sass.
cd "$(dirname "$0")/sass"
W=/tmp/l4; rm -rf $W; mkdir -p $W
comp() { # ver fam tile defines...
  local v=$1 fam=$2 tile=$3; shift 3
  nvcc -arch=sm_90a -cubin -std=c++17 -Xptxas -v -o $W/$v-$fam-$tile.cubin $v/$fam.cu "$@" > $W/$v-$fam-$tile.log 2>&1 || echo "COMPILE FAIL $v $fam $tile"
  cuobjdump -sass $W/$v-$fam-$tile.cubin | grep -v "^\s*Function\|^\s*code for\|^\s*Fatbin\|^$" > $W/$v-$fam-$tile.sass
}
for v in mid after; do
  while read fam tile defs; do
    while [ $(jobs -r | wc -l) -ge 16 ]; do sleep 0.2; done
    comp $v $fam $tile $defs &
  done < $v/defs.txt
done
wait
same=0; diff=0
while read fam tile defs; do
  if cmp -s $W/mid-$fam-$tile.sass $W/after-$fam-$tile.sass && [ -s $W/mid-$fam-$tile.sass ]; then same=$((same+1)); else diff=$((diff+1)); echo "DIFFERS $fam $tile"; fi
  adv=$(grep -h "C75" $W/after-$fam-$tile.log | sed 's/.*(\(C75[0-9]*\)).*/\1/' | sort -u | tr '\n' ' ')
  echo "$fam $tile: $(wc -l < $W/after-$fam-$tile.sass) lines, HGMMA $(grep -c HGMMA $W/after-$fam-$tile.sass), DEPBAR $(grep -o 'DEPBAR.LE gsb0, 0x[0-9]' $W/after-$fam-$tile.sass | sort | uniq -c | tr -s ' ' | tr '\n' ';') $(grep -h 'Used' $W/after-$fam-$tile.log | sed 's/.*Used/Used/') ${adv:+ADVISORY $adv}"
done < after/defs.txt > $OUT/tiles.txt
echo "SASS identical: $same, different: $diff" | tee $OUT/summary.txt
grep -c ADVISORY $OUT/tiles.txt; grep ADVISORY $OUT/tiles.txt | head
grep -E "ovl|128_160_2:" $OUT/tiles.txt
