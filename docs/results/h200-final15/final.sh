#!/bin/bash
# Built on the development machine at the commit named in README.md:
#   mkdir -p bin/final15
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags=-s -o bin/final15/tilefit ./cmd/tilefit
#   CGO_ENABLED=0 go test -c -ldflags=-s -o bin/final15/cuda.test ./backend/cuda
#   xz -9e bin/final15/tilefit bin/final15/cuda.test
#   cp ../shared/anchors/torch_fused.py docs/results/h200-verify/verify-share.py docs/results/h200-decode/table.py \
#      docs/results/h200-decode6/unxz.py docs/results/h200-final9/tables.py docs/results/h200-final15/final.sh bin/final15/
# and run on the H200 from the repository root, carrying bin/final15:  bash bin/final15/final.sh
# h200-final14's steps (h200-final13's with gemm_decode's device tests first): (0) TestDecode* (WATCHDOG 1); (1) the
# default strata sweep with --const-weights (every family, fp16 Y, --trace) from a cold kernel cache;
# (2) the torch anchor in the same call; (3) the report and tables of it; (4) the default decode sweep
# with --const-weights and the tool's copy bandwidth. Packs $OUT/final.tgz after every step.
set -u
export PYTHONUNBUFFERED=1
B=bin/final15; W=/tmp/fin; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/final.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
for b in tilefit cuda.test; do python3 $B/unxz.py $B/$b.xz $W/$b && chmod +x $W/$b; done
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; nproc; } > $o/env.txt 2>&1
# 0. gemm_decode's device tests
(cd backend/cuda && TILEFIT_OUT=$o timeout 200 $W/cuda.test -test.run '^TestDecode' -test.v -test.count=1 > $o/dtests.log 2>&1; echo "dtests exit $?" >> $o/dtests.log)
grep -E "^(--- |ok|FAIL|PASS)|exit|differ|panic" $o/dtests.log | head -20; gzip -9 $o/dtests.log; pack dtests
rm -rf "$HOME/.cache/tilefit"
# 1. the strata sweep, every family, fp16 Y, cold cache, race on, --const-weights
/usr/bin/time -f "sweep wall %e s" timeout 130 $t sweep --trace --backend cuda --workload strata --out-type f16 --const-weights --db $W/race.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err
python3 $B/verify-share.py $o/sweep.err > $o/verify-share.txt 2>&1
pack sweep
grep -E "^(swept|sweep)" $o/sweep.err; tail -n 2 $o/verify-share.txt; grep -E "^(ALL|NOT|BATCH)" $o/sweep.md
# 2. the torch anchor, same call
timeout 110 python3 $B/torch_fused.py --m 256,512,1024,1983,2048 --secs 0.6 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; grep CHUNK $o/torch.txt; pack torch
# 3. the report and the tables
$t report --db $W/race.db --workload strata > $o/report.md 2> $o/report.err
python3 $B/tables.py $W/race.db $o/torch.json > $o/tables.txt 2>&1; cat $o/tables.txt | head -40
gzip -9 $o/report.md; pack report
# 4. decode: the default decode sweep with --const-weights, the tool's copy bandwidth, % of copy per cell
/usr/bin/time -f "decode wall %e s" timeout 60 $t sweep --backend cuda --workload decode --out-type f16 --const-weights --db $W/dec.db > $o/decode.md 2> $o/decode.err
echo "decode exit $?" >> $o/decode.err
timeout 30 $t devices --backend cuda --measure --db $W/dec.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
python3 $B/table.py $W/dec.db > $o/decode-table.txt 2>&1; cp $W/dec.db $o/dec.db; gzip -9 $o/dec.db
tail -n 2 $o/decode.err; grep -E "^(ALL|NOT|BATCH)" $o/decode.md; head -14 $o/decode-table.txt
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
