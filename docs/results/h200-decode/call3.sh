#!/bin/bash
# decode call 3: gemm_decode plain and split-K (KSPLIT/KW) tiles. GPU tests first (bitwise vs gemm_f16's
# reference and vs gemm_wgmma's split tiles; a failure stops the call), then three sweeps (fp16 Y, cuBLAS and
# cuBLASLt in the same rounds, gemm_f16's reference first): sq4096+sq8192 with plain and chunk-1024/512
# tiles, Wout with plain and chunk-1536/512 tiles, Wqkv+Wq (plain tiles against gemm_stream); then the
# default tiles of gemm_decode on the decode preset; the tool's copy bandwidth in the same call.
set +e
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=bin/decode; W=/tmp/decode3; rm -rf $W; mkdir -p $W/o3; o=$W/o3
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c3.tgz -C $W o3; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
timeout 50 $W/cuda.test -test.run 'TestDecode(Through|SplitThrough)' -test.v > $o/test.log 2>&1; rc=$?; echo "test exit $rc" >> $o/test.log
grep -E "^(---|ok|FAIL|PASS)|differ|exit" $o/test.log | head -12; pack test
if [ $rc -ne 0 ]; then grep -m8 -iE "error|differ|fail|panic" $o/test.log; exit 0; fi
pre() { echo "$1" | tr ',' '\n' | sed "s|^|$2/|" | paste -sd, -; }
CMP=gemm_stream/32_8_2.tk128.stages6,gemm_stream/32_16_2,gemm_stream/32_8_2,gemm_wgmma/64_8_1.pdl1.swap1,gemm_wgmma/64_16_1.pdl1.swap1
PLAIN=32_4,32_4.pdl1,32_4.pdl2,64_4,64_4.pdl1,64_4.pdl2,64_8.pdl1,32_4.tk128.stages8.pdl1
S16=32_4.ksplit16.kw4.stages8,32_4.ksplit16.kw4.stages8.pdl1,32_4.ksplit16.kw4.stages8.pdl2,32_8.ksplit16.kw4.stages8,32_4.ksplit16.kw4.tk128.stages8,16_4.ksplit16.kw4.tk128.stages8,16_4.ksplit16.kw4.tk128.stages8.pdl2,32_4.ksplit8.kw4.tk128.stages8
S24=16_4.ksplit24.kw4.tk128.stages8,16_4.ksplit24.kw4.tk128.stages8.pdl1,16_4.ksplit24.kw4.tk128.stages8.pdl2,16_8.ksplit24.kw4.tk128.stages8,32_4.ksplit24.kw4.stages8,32_4.ksplit24.kw4.tk128.stages8,8_4.ksplit24.kw4.tk128.stages8,16_4.ksplit24.kw4.stages6,16_4.ksplit8.kw4.tk128.stages8
sweep() { # name workload tiles
  /usr/bin/time -f "$1 wall %e s" timeout 60 $t sweep --backend cuda --workload $2 --family gemm_f16,gemm_decode,gemm_stream,gemm_wgmma \
    --tiles "$3" --out-type f16 --rounds 12 --db $W/d3.db > $o/$1.md 2> $o/$1.err
  echo "$1 exit $?" >> $o/$1.err; tail -2 $o/$1.err
}
sweep sq $B/sq.yaml "$(pre $PLAIN,$S16 gemm_decode),$CMP,gemm_wgmma/64_8_1.pdl1.swap1.ksplit16,gemm_wgmma/64_8_1.pdl1.swap1.ksplit8"
sweep wout $B/wout.yaml "$(pre $PLAIN,$S24 gemm_decode),$CMP,gemm_wgmma/64_8_1.pdl1.swap1.ksplit24,gemm_wgmma/64_8_1.pdl1.swap1.ksplit8"
timeout 30 $t devices --backend cuda --measure --db $W/d3.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
python3 $B/cells.py $W/d3.db > $o/cells.txt 2>&1; cp $W/d3.db $o/; pack sweeps
sweep wide $B/wide.yaml "$(pre $PLAIN gemm_decode),$CMP"
/usr/bin/time -f "default wall %e s" timeout 40 $t sweep --backend cuda --workload decode --family gemm_decode --out-type f16 --rounds 12 --db $W/def.db > $o/default.md 2> $o/default.err
echo "default exit $?" >> $o/default.err; tail -2 $o/default.err
timeout 10 $t devices --backend cuda --measure --db $W/def.db > /dev/null 2>&1
python3 $B/cells.py $W/d3.db > $o/cells.txt 2>&1; python3 $B/cells.py $W/def.db > $o/default-cells.txt 2>&1
head -75 $o/cells.txt | grep -v "^sq\|^Wout\|^Wq"
cp $W/d3.db $W/def.db $o/; gzip -9 $o/d3.db $o/def.db
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
