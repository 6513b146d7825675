#!/bin/bash
# decode6 call 1: the read ceiling (TestReadCeiling: batched register loads, 1-D bulk rings, 2-D TMA rings,
# memcpy; 32 MiB / 30 MiB rotated over 8 sets, 256 MiB), torch's reads in the same graph pattern,
# and the gemm_decode defaults timed by the tool, copy_gbps in each process.
set +e
B=bin/decode6; W=/tmp/d6; rm -rf $W; mkdir -p $W/o; o=$W/o
python3 $B/unxz.py $B/tilefit.xz $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
python3 $B/unxz.py $B/cuda.test.xz $W/cuda.test && chmod +x $W/cuda.test
nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.mem,temperature.gpu --format=csv > $o/env.txt 2>&1
(cd backend/cuda && timeout 110 $W/cuda.test -test.run 'TestReadCeiling' -test.v > $o/ceiling.log 2>&1; echo "exit $?" >> $o/ceiling.log)
grep -E "^(---|ok|FAIL|PASS|exit)|summed|rror|panic" $o/ceiling.log | head -20
nvidia-smi --query-gpu=power.draw,clocks.sm,clocks.mem,temperature.gpu --format=csv >> $o/env.txt 2>&1
PYTHONUNBUFFERED=1 timeout 120 python3 $B/torch_read.py > $o/torch.log 2>&1; echo "torch exit $?" >> $o/torch.log
S=gemm_decode/32_8.ksplit16.kw4.tk128.stages16.pdl1.lp2
V=gemm_decode/40_10.ksplit24.kw2.kc2.tk128.stages8.pdl1.lp2
timeout 60 $t sweep --backend cuda --workload $B/sq4096.yaml --family gemm_decode --tiles $S --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/sq4096.md 2> $o/sq4096.err
timeout 60 $t sweep --backend cuda --workload $B/wout.yaml --family gemm_decode --tiles $V --out-type f16 --rounds 12 --vendor=false --db $W/d.db > $o/wout.md 2> $o/wout.err
timeout 20 $t devices --backend cuda --measure --db $W/d.db > $o/devices.txt 2>&1
python3 $B/top.py $o/ceiling.log > $o/top.txt 2>&1
cat $o/torch.log; grep copy_gbps $o/devices.txt; grep -E "^\| (sq4096|Wout) " $o/sq4096.md $o/wout.md | cut -c1-220 | head -12
cat $o/top.txt | head -70
cp $o/ceiling.log $o/torch.log $o/top.txt $OUT/
tar czf $OUT/c1.tgz -C $W o
