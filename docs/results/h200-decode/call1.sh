#!/bin/bash
# decode call 1: gemm_decode's GPU test (bitwise vs gemm_f16, WATCHDOG), then the decode workload
# (sq4096, Wout, sq8192 at M 1, 7, 16; fp16 Y) with gemm_decode tiles beside the best earlier
# gemm_stream / gemm_wgmma tiles, gemm_f16's reference, cuBLAS and cuBLASLt in the same rounds; the
# tool's copy bandwidth (tilefit devices --measure) in the same call.
set +e
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=bin/decode; W=/tmp/decode; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c1.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
timeout 60 $W/cuda.test -test.run 'TestDecodeThroughPlan' -test.v > $o/test.log 2>&1; echo "test exit $?" >> $o/test.log
tail -5 $o/test.log; pack test
DT=16_2,16_2.stages8,16_1,16_2.tk512,16_2.tk128.stages8,16_2.pdl1,16_2.pdl2,16_2.stages8.pdl2,32_4,32_4.stages8,32_2,32_2.stages8,32_1,32_4.tk512,32_4.tk128.stages8,32_4.pdl1,32_4.pdl2,32_4.stages8.pdl2,64_4,64_8,64_4.tk128.stages6,64_4.pdl2,8_1,8_1.stages8
TILES=$(echo $DT | tr ',' '\n' | sed 's|^|gemm_decode/|' | paste -sd, -),gemm_stream/32_8_2,gemm_stream/32_8_2.tk128.stages6,gemm_stream/32_16_2,gemm_wgmma/64_8_1.pdl1.swap1,gemm_wgmma/64_16_1.pdl1.swap1
/usr/bin/time -f "sweep wall %e s" timeout 110 $t sweep --backend cuda --workload decode --family gemm_f16,gemm_decode,gemm_stream,gemm_wgmma \
  --tiles "$TILES" --out-type f16 --rounds 8 --db $W/d1.db > $o/sweep.md 2> $o/sweep.err
echo "sweep exit $?" >> $o/sweep.err; tail -3 $o/sweep.err; pack sweep
timeout 30 $t devices --backend cuda --measure --db $W/d1.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
python3 $B/cells.py $W/d1.db > $o/cells.txt 2>&1; head -40 $o/cells.txt
cp $W/d1.db $o/; gzip -9 $o/d1.db
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
