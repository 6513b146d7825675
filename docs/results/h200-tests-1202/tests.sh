#!/bin/bash
# Device verification tests (issue 17), run on the H200 from the repository root, carrying bin/t1.
# Built at main df3f29a: CGO_ENABLED=0 go test -c -ldflags=-s -o bin/t1/cuda.test ./backend/cuda; gzip -9 bin/t1/cuda.test
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
W=/tmp/t1; rm -rf $W; mkdir -p $W/o; o=$W/o; T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
gunzip -c bin/t1/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,temperature.gpu --format=csv; nproc; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
cd backend/cuda
step() { # name timeout regexp
  local left=$(( 520 - $(el) )); local lim=$2; [ $left -lt $lim ] && lim=$left
  if [ $lim -lt 20 ]; then echo "$1: skipped (no time left)" >> $o/summary.txt; return; fi
  timeout $((lim+5)) $W/cuda.test -test.v -test.timeout ${lim}s -test.run "$3" > $o/$1.log 2>&1; echo "$1 exit $? at t=$(el)s" >> $o/summary.txt
  grep -E "^(--- |ok|FAIL|PASS|panic)" $o/$1.log | head -40 >> $o/summary.txt
  tar czf $OUT/t1.tgz -C $W o
}
step verify 120 'TestVerifySourceOnHost|TestVerifierOnDevice|TestDroppedLastKOnDevice'
step exactsweep 220 'TestExactSweepCUDA'
step conf 150 'TestConformance$|TestFusedCUDAConformance|TestWgmmaSplitK|TestHopperFused'
cat $o/summary.txt
