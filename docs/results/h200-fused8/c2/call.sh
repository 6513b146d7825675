#!/bin/bash
# compile-only, call 2 (bash bin/lead/c1/call.sh with carry bin/lead): vA.cu = the hc_up_wgmma source with
# the consumer's exit wait (commit b9ec056's core), vB.cu = vA with the overlapped epilogue replaced by a
# branch-free sum of acc (../README.md); defs.txt: 128_160_2.ovl1, 128_160_2.ovl2, 128_128_2.ovl1, 64_160_1.ovl1
cd "$(dirname "$0")"
mkdir -p /tmp/o
comp() { # name src defines...
  local name=$1 src=$2; shift 2
  nvcc -arch=sm_90a -cubin -std=c++17 -Xptxas -v -o /tmp/o/$name.cubin $src "$@" > /tmp/o/$name.log 2>&1
  { echo "== $name rc=$?"; grep -E "C75|registers|spill" /tmp/o/$name.log
    cuobjdump -sass /tmp/o/$name.cubin > /tmp/o/$name.sass 2>&1
    echo "HGMMA $(grep -c HGMMA /tmp/o/$name.sass)  DEPBAR: $(grep -o 'WARPGROUP.DEPBAR.LE gsb0, 0x[0-9]' /tmp/o/$name.sass | sort | uniq -c | tr '\n' ';')  ARRIVES $(grep -c 'WARPGROUP.ARRIVE' /tmp/o/$name.sass)"; } > /tmp/o/$name.sum
}
for f in vA vB; do
while read tile defs; do
  comp "${f}_$tile" $f.cu $defs &
done < defs.txt
done
wait
cat /tmp/o/*.sum | tee $OUT/summary.txt
tar czf $OUT/sass.tgz -C /tmp/o $(cd /tmp/o && ls *.sass *.log)
