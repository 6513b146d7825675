set -x
cd backend/cuda
gunzip -c ../../bin/final10/cuda.test.gz > /tmp/cuda.test && chmod +x /tmp/cuda.test
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > $OUT/env.txt 2>&1
timeout 420 /tmp/cuda.test -test.run 'TestWgmma|TestHopper|TestDecode|TestGemmQ8' -test.count=1 -test.v > $OUT/tests.log 2>&1; echo "rc=$?" >> $OUT/tests.log
grep -E '^(--- |PASS|FAIL|ok|rc=)' $OUT/tests.log | tail -60
