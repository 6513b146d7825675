#!/bin/bash
# lead call 2: the decode device tests and the read ceiling again (call 1's logs did not come back), one tarball.
set +e
B=bin/lead; W=/tmp/l2; rm -rf $W; mkdir -p $W/o; o=$W/o
python3 $B/unxz.py $B/cuda.test.xz $W/cuda.test && chmod +x $W/cuda.test
nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.mem,temperature.gpu --format=csv > $o/env.txt 2>&1
(cd backend/cuda && /usr/bin/time -f "%e s" timeout 240 $W/cuda.test -test.run 'TestDecode|TestReadCeiling' -test.v > $o/test.log 2>&1; echo "test exit $?" >> $o/test.log)
grep -E "^(--- |ok|FAIL|PASS)|differ|exit|panic| s$" $o/test.log | head -20
tar czf $OUT/logs2.tgz -C $W o
