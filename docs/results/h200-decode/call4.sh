#!/bin/bash
# decode call 4: the GPU tests with the corrected split tiles (STAGES a multiple of KW), then the final
# default tiles of gemm_decode on the decode preset (fp16 Y, cuBLAS + cuBLASLt), the tool's copy bandwidth.
set +e
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
B=bin/decode; W=/tmp/decode4; rm -rf $W; mkdir -p $W/o4; o=$W/o4
pack() { tar czf $OUT/c4.tgz -C $W o4; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
gunzip -c $B/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
timeout 15 $W/cuda.test -test.run 'TestDecode' -test.v > $o/test.log 2>&1; echo "test exit $?" >> $o/test.log
grep -E "^(---|ok|FAIL|PASS)|differ|exit" $o/test.log | head -8; pack
timeout 12 $t sweep --backend cuda --workload decode --family gemm_decode --out-type f16 --rounds 12 --db $W/def.db > $o/default.md 2> $o/default.err
echo "default exit $?" >> $o/default.err; tail -1 $o/default.err; pack
timeout 5 $t devices --backend cuda --measure --db $W/def.db > $o/devices.txt 2>&1
python3 $B/cells.py $W/def.db > $o/default-cells.txt 2>&1; head -3 $o/default.md; grep gemm_decode $o/default-cells.txt | head -12
gzip -9c $W/def.db > $o/def.db.gz; pack
