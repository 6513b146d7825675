#!/bin/bash
# decode9's fourth H200 call: the default decode sweep with --const-weights (every family, fp16 Y) with
# gemm_decode's final constant-weights tiles, and the tool's copy bandwidth (h200-final14's step 4).
# tilefit built at the commit named in README.md into bin/d9 with unxz.py, h200-decode's table.py and
# this script beside it; run from the repository root, carrying bin/d9:  bash bin/d9/call4.sh
set -u
B=bin/d9; W=/tmp/d9; rm -rf $W; mkdir -p $W/o; o=$W/o
python3 $B/unxz.py $B/tilefit.xz $W/tilefit && chmod +x $W/tilefit
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
/usr/bin/time -f "decode wall %e s" timeout 60 $t sweep --backend cuda --workload decode --out-type f16 --const-weights --db $W/dec.db > $o/decode.md 2> $o/decode.err
echo "decode exit $?" >> $o/decode.err
timeout 30 $t devices --backend cuda --measure --db $W/dec.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
python3 $B/table.py $W/dec.db > $o/decode-table.txt 2>&1; cp $W/dec.db $o/dec.db; gzip -9 $o/dec.db
tail -n 2 $o/decode.err; grep -E "^(ALL|NOT|BATCH)" $o/decode.md; head -14 $o/decode-table.txt
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
tar czf $OUT/c.tgz -C $W o
