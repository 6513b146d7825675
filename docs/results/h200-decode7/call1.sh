#!/bin/bash
# lead call 1 (decode XP): compile check of the dec_wait_on refactor (old vs new SASS) and XP's
# registers; the decode device tests; paired gemm_decode sweeps with XP twins; copy_gbps in the same call.
set +e
B=bin/lead; W=/tmp/l1; rm -rf $W; mkdir -p $W/o $W/c; o=$W/o
python3 $B/unxz.py $B/tilefit.xz $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
python3 $B/unxz.py $B/cuda.test.xz $W/cuda.test && chmod +x $W/cuda.test
nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.mem,temperature.gpu --format=csv > $o/env.txt 2>&1
comp() { # name src defines...
  local name=$1 src=$2; shift 2
  nvcc -arch=sm_90a -cubin -std=c++17 -Xptxas -v -o $W/c/$name.cubin $src "$@" > $W/c/$name.log 2>&1
  echo "rc=$?" >> $W/c/$name.log
  cuobjdump -sass $W/c/$name.cubin | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's|/\*[0-9a-f]*\*/||g;s|;.*||' > $W/c/$name.sass 2>&1
}
( while read tile defs; do comp "old_$tile" $B/src/old.cu $defs & comp "new_$tile" $B/src/new.cu $defs & done < $B/src/cmp.txt
  while read tile defs; do comp "xp_$tile" $B/src/new.cu $defs & done < $B/src/xp.txt; wait
  while read tile defs; do
    if cmp -s $W/c/old_$tile.sass $W/c/new_$tile.sass; then r=SAME; else r="DIFFER $(diff $W/c/old_$tile.sass $W/c/new_$tile.sass | grep -c '^[<>]')"; fi
    echo "$tile sass $r $(wc -l < $W/c/new_$tile.sass) lines; $(grep -E 'registers' $W/c/new_$tile.log | sed 's/.*Used/Used/')"
  done < $B/src/cmp.txt > $o/sass-cmp.txt
  for f in $W/c/xp_*.log; do echo "$(basename $f .log): $(grep -E 'rc=|registers|spill' $f | tr '\n' ' ')"; done > $o/xp-regs.txt ) &
CP=$!
(cd backend/cuda && timeout 240 $W/cuda.test -test.run 'TestDecode|TestReadCeiling' -test.v > $o/test.log 2>&1; echo "test exit $?" >> $o/test.log)
grep -E "^(--- |ok|FAIL|PASS)|differ|exit|panic" $o/test.log | grep -v "^--- PASS" | head -20; grep -c "^--- PASS" $o/test.log
wait $CP; cat $o/sass-cmp.txt $o/xp-regs.txt
tl() { echo "$@" | tr ' ' '\n' | sed "s|^|gemm_decode/|;s|$|.lp2|" | paste -sd, -; }
SQ=$(tl 32_8.ksplit16.kw4.tk128.stages16.pdl1 32_8.ksplit16.kw4.tk128.stages16.pdl2 32_8.ksplit16.kw4.tk128.stages16.pdl2.xp1 \
  32_8.ksplit16.kw4.tk256.stages8.pdl2 32_8.ksplit16.kw4.tk256.stages8.pdl2.xp1 32_8.ksplit16.kw4.tk128.stages8.pdl2.xp1 \
  64_8.ksplit16.kw2.kc2.tk128.stages8.pdl2 64_8.ksplit16.kw2.kc2.tk128.stages8.pdl2.xp1 64_8.ksplit16.kw2.kc2.tk256.stages4.pdl2.xp1)
WO=$(tl 40_10.ksplit24.kw2.kc2.tk128.stages8.pdl1 40_10.ksplit24.kw2.kc2.tk128.stages8.pdl2 40_10.ksplit24.kw2.kc2.tk128.stages8.pdl2.xp1 \
  40_10.ksplit24.kw2.kc2.tk128.stages14.pdl2.xp1 80_10.ksplit24.kc4.tk128.stages8.pdl2.xp1)
S8=$(tl 64_4.tk128.stages8.pdl1 64_4.tk128.stages8.pdl2 64_4.tk128.stages8.pdl2.xp1)
timeout 100 $t sweep --backend cuda --workload $B/sq4096.yaml --family gemm_decode --tiles "$SQ" --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/sq4096.md 2> $o/sq4096.err; echo "sweep exit $?" >> $o/sq4096.err
timeout 70 $t sweep --backend cuda --workload $B/wout.yaml --family gemm_decode --tiles "$WO" --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/wout.md 2> $o/wout.err; echo "sweep exit $?" >> $o/wout.err
timeout 50 $t sweep --backend cuda --workload $B/sq8192.yaml --family gemm_decode --tiles "$S8" --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/sq8192.md 2> $o/sq8192.err; echo "sweep exit $?" >> $o/sq8192.err
timeout 20 $t devices --backend cuda --measure --db $W/d.db > $o/devices.txt 2>&1
python3 $B/pivot.py $W/d.db > $o/pivot.txt 2>&1
tail -1 $o/sq4096.err $o/wout.err $o/sq8192.err; grep copy_gbps $o/devices.txt; grep -iE "bitwise|invariant|fail" $o/*.md | head -8
cat $o/pivot.txt
gzip -c $W/d.db > $o/d.db.gz
cp -r $o/. $OUT/
