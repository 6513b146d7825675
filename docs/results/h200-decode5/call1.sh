#!/bin/bash
# decode5 call 1: the read ceiling (TestReadCeiling: read-only kernel and cuMemcpyDtoD at 32 MiB / 30 MiB,
# 64 calls in one CUDA graph, 8 rotated buffer sets), copy_gbps, and the current decode defaults timed by the tool.
set +e
B=bin/decode5; W=/tmp/d5; rm -rf $W; mkdir -p $W/o; o=$W/o
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm --format=csv > $o/env.txt 2>&1
(cd backend/cuda && timeout 90 $W/cuda.test -test.run 'TestReadCeiling' -test.v > $o/ceiling.log 2>&1; echo "exit $?" >> $o/ceiling.log)
cat $o/ceiling.log
S=gemm_decode/32_8.ksplit16.kw4.tk128.stages16.pdl1.lp2
V=gemm_decode/40_10.ksplit24.kw2.kc2.tk128.stages8.pdl1.lp2
timeout 40 $t sweep --backend cuda --workload $B/sq4096.yaml --family gemm_decode --tiles $S --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/sq4096.md 2> $o/sq4096.err
timeout 40 $t sweep --backend cuda --workload $B/wout.yaml --family gemm_decode --tiles $V --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/wout.md 2> $o/wout.err
timeout 15 $t devices --backend cuda --measure --db $W/d.db > $o/devices.txt 2>&1
cat $o/devices.txt | head -20; grep -E "^\|" $o/sq4096.md $o/wout.md | head -30
tar czf $OUT/c1.tgz -C $W o
