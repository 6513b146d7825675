#!/bin/bash
set -u
W=/tmp/sk; rm -rf $W; mkdir -p $W
t=bin/hopper/tilefit
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} TILEFIT_CUDA_CACHE=/tmp/tfcache
TILEFIT_OUT=$W timeout 200 bin/hopper/cuda.test -test.run 'TestWgmmaSplitK$|TestWgmmaThroughPlan$' -test.v > $W/test.log 2>&1; echo "test rc=$?"
grep -E "^(--- |ok|FAIL|PASS)|differ|err" $W/test.log | head -20 | cut -c1-300
G=gemm_wgmma
TILES="128_128_4,$G/64_48_1,$G/64_128_1,$G/64_192_1,$G/128_48_1,$G/64_64_2.pingpong1,$G/64_160_1"
for k in 10 16 20 40; do TILES="$TILES,$G/64_48_1.ksplit$k,$G/64_128_1.ksplit$k,$G/64_64_2.pingpong1.ksplit$k"; done
TILES="$TILES,$G/64_192_1.ksplit16,$G/64_192_1.ksplit40"
/usr/bin/time -f "sweep wall %e s" timeout 300 $t sweep --backend cuda --workload bin/hopper/skinny.yaml --tiles "$TILES" --db $W/skinny.db --aa=false > $W/skinny.md 2> $W/skinny.err
echo "sweep exit $?" >> $W/skinny.err; tail -4 $W/skinny.err
cp $W/skinny.db $OUT/skinny.db
tar czf $OUT/splitk.tgz -C $W --exclude skinny.db .
grep -iE "bitwise|chunk|failed" $W/skinny.md | head
