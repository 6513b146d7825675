#!/bin/bash
# Call 3 (final) of the speed2 branch: the default strata sweep (every family, fp16 Y) from a
# cold kernel cache with --trace, its verify share; then, in the time left, the same sweep at
# M 256 with --race=false (warm cache) and race-chunk.py over the two. Built on the development
# machine at the commit named in README.md:
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags=-s -o /work/main/bin/speed2/tilefit ./cmd/tilefit
#   gzip -9 -f /work/main/bin/speed2/tilefit
#   cp docs/results/h200-verify/verify-share.py docs/results/h200-verify/race-chunk.py docs/results/h200-speed2/final.sh /work/main/bin/speed2/
# run from the repository root carrying bin/speed2:  bash bin/speed2/final.sh
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=bin/speed2; W=/tmp/sp2f; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/final.tgz -C $W o; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $W/tilefit version; nproc; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
/usr/bin/time -f "sweep wall %e s" timeout 115 $W/tilefit sweep --trace --backend cuda --workload strata --out-type f16 --db $W/race.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err
python3 $B/verify-share.py $o/sweep.err > $o/verify-share.txt 2>&1; echo "verify-share exit $?" >> $o/verify-share.txt
cp $W/race.db $o/race.db; pack
grep -E "^(trace|swept|sweep)" $o/sweep.err; tail -n 2 $o/verify-share.txt; grep -E "^(ALL|NOT|BATCH)" $o/sweep.md
left=$(( 118 - $(el) ))
if [ $left -gt 12 ]; then
  /usr/bin/time -f "exhaustive wall %e s" timeout $left $W/tilefit sweep --backend cuda --workload strata --m 256 --out-type f16 --race=false --report=false --db $W/full.db > $o/full.md 2> $o/full.err
  echo "exhaustive exit $?" >> $o/full.err
  python3 $B/race-chunk.py $W/race.db $W/full.db > $o/race-chunk.txt 2>&1; echo "race-chunk exit $?" >> $o/race-chunk.txt
  cp $W/full.db $o/full.db; pack; tail -n 2 $o/full.err; cat $o/race-chunk.txt
fi
