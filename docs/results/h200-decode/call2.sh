#!/bin/bash
# decode call 2: gemm_decode with TMA boxes. Its GPU test first (stops the call when it fails), then the
# decode workload (fp16 Y) with gemm_decode tiles beside the best earlier gemm_stream / gemm_wgmma
# tiles, gemm_f16's reference, cuBLAS and cuBLASLt in the same rounds; the tool's copy bandwidth;
# TestExactSweepCUDA (every CUDA family's default tiles, gemm_decode's included on Wout).
set +e
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=bin/decode; W=/tmp/decode2; rm -rf $W; mkdir -p $W/o2; o=$W/o2
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c2.tgz -C $W o2; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
timeout 60 $W/cuda.test -test.run 'TestDecode' -test.v > $o/test.log 2>&1; rc=$?; echo "test exit $rc" >> $o/test.log
tail -4 $o/test.log; pack test
if [ $rc -ne 0 ]; then grep -m5 -iE "error|differ|fail" $o/test.log; exit 0; fi
DT=8_1,8_1.stages8,8_1.tk512,8_1.pdl2,16_2,16_1,16_2.stages8,16_2.tk512,16_2.pdl1,16_2.pdl2,16_2.tk128.stages8,32_4,32_2,32_1,32_4.stages8,32_4.tk512,32_4.pdl1,32_4.pdl2,32_4.tk128.stages8,64_8,64_4,64_4.pdl2,64_8.tk128.stages6
TILES=$(echo $DT | tr ',' '\n' | sed 's|^|gemm_decode/|' | paste -sd, -),gemm_stream/32_8_2.tk128.stages6,gemm_stream/32_16_2,gemm_wgmma/64_8_1.pdl1.swap1,gemm_wgmma/64_16_1.pdl1.swap1
/usr/bin/time -f "sweep wall %e s" timeout 100 $t sweep --backend cuda --workload decode --family gemm_f16,gemm_decode,gemm_stream,gemm_wgmma \
  --tiles "$TILES" --out-type f16 --rounds 12 --db $W/d2.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err; tail -2 $o/sweep.err
timeout 30 $t devices --backend cuda --measure --db $W/d2.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
python3 $B/cells.py $W/d2.db > $o/cells.txt 2>&1; head -60 $o/cells.txt
cp $W/d2.db $o/; gzip -9 $o/d2.db; pack sweep
timeout 110 $W/cuda.test -test.run 'TestExactSweepCUDA' -test.v > $o/exact.log 2>&1; echo "exact exit $?" >> $o/exact.log
grep -E "gemm_decode|^--- |exact exit" $o/exact.log | head -20
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
