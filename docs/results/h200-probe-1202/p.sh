#!/bin/bash
# Probe (not landed code): the strata sweep at M 256 and 2048, fp16 Y, cold cache, with
# sub-phase timings of verify and of the parent's work between cells (branch probe).
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
W=/tmp/pr; rm -rf $W; mkdir -p $W/o; o=$W/o
gunzip -c bin/probe/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
rm -rf "$HOME/.cache/tilefit"
/usr/bin/time -f "sweep wall %e s" timeout 200 $W/tilefit sweep --backend cuda --workload strata --m 256,2048 --out-type f16 --db $W/p.db --report=false > $o/sweep.md 2> $o/sweep.err
echo "exit $?" >> $o/sweep.err
tar czf $OUT/p.tgz -C $W o
tail -5 $o/sweep.err
