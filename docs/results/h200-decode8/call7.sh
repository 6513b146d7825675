#!/bin/bash
# decode8's seventh H200 call: hc_up at M 512 only, 24 rounds, the constant-weights pick beside tiles
# of other widths, groups and grids with PDL 2 (a screen for a faster M 512 tile; no torch in this
# call). Binary built at the commit named in README.md into bin/hc with unxz.py, wpre.py and this
# script beside it; run from the repository root, carrying bin/hc:  bash bin/hc/call7.sh
set -u
B=bin/hc; W=/tmp/hc; rm -rf $W; mkdir -p $W/o; o=$W/o
python3 $B/unxz.py $B/tilefit.xz $W/tilefit && chmod +x $W/tilefit
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
HC=128_128_2.pingpong1.pdl2,128_160_2,128_160_2.pdl2,128_64_2.pingpong1.pdl2,128_96_2.pingpong1.pdl2,128_192_2.pdl2,128_224_2.pdl2,128_64_2.pdl2,128_96_2.pdl2,128_128_2.pingpong1.grid128.pdl2,128_128_2.pingpong1.grid0.pdl2,64_128_1.pdl2,64_64_1.pdl2,128_128_2.pingpong1.group4.pdl2,128_128_2.pingpong1.group16.pdl2,256_128_2.pdl2
timeout 100 $t sweep --backend cuda --workload strata --family hc_up_wgmma --tiles $HC --m 512 --rounds 24 --race=false --vendor=false --db $W/hc512.db > $o/hc512.md 2> $o/hc512.err
echo "hc512 exit $?" >> $o/hc512.err; grep -E "^(ALL|NOT|BATCH)" $o/hc512.md; tail -2 $o/hc512.err
echo '[{"op":"hc_up","form":"compiled","M":512,"us":15.36}]' > $W/t.json
python3 $B/wpre.py $W/hc512.db $W/t.json hc_up > $o/hc512-table.txt 2>&1; cat $o/hc512-table.txt
cp $W/hc512.db $o/; gzip -9 $o/hc512.db
tar czf $OUT/c.tgz -C $W o
