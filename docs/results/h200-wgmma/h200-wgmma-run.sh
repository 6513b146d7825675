#!/bin/bash
# Check + timing of gemm_wgmma on the H200. OUT is set by the run tool.
# Everything lands in $OUT/all.tgz (at most 8 files come back).
B=bin/hopper/cuda.test
W=/tmp/hop; rm -rf $W; mkdir -p $W
export TILEFIT_CUDA_CACHE=/tmp/tfcache
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw,driver_version --format=csv > $W/smi.txt 2>&1
TILES="${TILES:-128_256_2 128_128_2.pingpong1.stages6 64_256_2.pingpong1.stages5 64_192_2.pingpong1.stages6 256_128_2 128_168_2.stages5 128_160_2.stages5 64_128_1.stages8 64_64_1.stages12 64_48_1.stages15 128_64_2.stages8 128_128_1.stages6 128_64_1.stages10 128_48_2.stages10}"
F16TILES="${F16TILES:-128_256_2 128_128_2.pingpong1.stages6 64_256_2.pingpong1.stages5 128_168_2.stages5 128_64_2.stages8 64_64_1.stages12}"
for v in $TILES; do
  ( mkdir -p $W/c-$v; TILEFIT_OUT=$W/c-$v TILEFIT_WGMMA_WATCHDOG=1 TILEFIT_WGMMA_TILES=$v timeout 120 $B -test.run 'TestHopperCheck$' -test.v > $W/check-$v.log 2>&1; echo "$v $?" >> $W/rc.txt ) &
done
wait
cat $W/rc.txt
for v in $TILES; do grep -hE "regs" $W/c-$v/check.txt | cut -c1-200; echo "BITWISE $(grep -hcE ' BITWISE' $W/c-$v/check.txt)"; grep -hE "DIFFERS|FAIL|panic|C7508|erializ" $W/check-$v.log | head -3 | cut -c1-600; done
for f in $W/c-*/*.cubin; do echo "$(basename $f) HGMMA=$(cuobjdump -sass $f | grep -c HGMMA)"; done
rm -f $W/c-*/*.cubin
PASS=$(awk '$2==0||$2==1{print $1}' $W/rc.txt | tr '\n' ' ')
echo "timing: $PASS"
[ -n "$PASS" ] && TILEFIT_OUT=$W TILEFIT_HOPPER_TIME=1 TILEFIT_WGMMA_TILES="$PASS" timeout ${TT:-240} $B -test.run 'TestHopperTime$' -test.v > $W/time.log 2>&1
echo "time rc=$?"
mkdir -p $W/f16; TILEFIT_OUT=$W/f16 TILEFIT_WGMMA_F16=1 TILEFIT_HOPPER_M=1983 TILEFIT_HOPPER_TIME=1 TILEFIT_WGMMA_TILES="$F16TILES" timeout 120 $B -test.run 'TestHopperTime$' -test.v > $W/f16/time.log 2>&1
echo "f16 time rc=$?"
if [ -n "$NCU" ]; then mkdir -p $W/ncu; TILEFIT_OUT=$W/ncu TILEFIT_HOPPER_CASE=Walbe:48:2560:1983 TILEFIT_WGMMA_TILES="$NCU" timeout 90 ncu --clock-control none -k tilefit_gemm_wgmma -c 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section MemoryWorkloadAnalysis $B -test.run 'TestHopperCheck$' > $W/ncu/ncu.txt 2>&1; echo "ncu rc=$?"; fi
rm -f $W/*.cubin $W/f16/*.cubin $W/ncu/*.cubin
cp $W/time.txt $OUT/time.txt; cp $W/f16/time.txt $OUT/time-f16.txt
tar czf $OUT/all.tgz -C $W .
grep -hE "BEST|CHUNK" $W/time.txt $W/f16/time.txt
grep -hE "sq8192" $W/time.txt $W/f16/time.txt | cut -c1-140
