#!/bin/bash
# lead call 7: the device conformance tests on main after the decode6 merge and the MC residency test
# (commit 351545f). Run: bash bin/lead/call7.sh, carry bin/lead.
set -u
cd backend/cuda
xz -dc ../../bin/lead/cuda.test.xz > /tmp/cuda.test && chmod +x /tmp/cuda.test
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv > $OUT/env.txt 2>&1
timeout 420 /tmp/cuda.test -test.run 'TestWgmma|TestHopper|TestDecode|TestGemmQ8' -test.count=1 -test.v > $OUT/tests.log 2>&1; echo "rc=$?" >> $OUT/tests.log
grep -E '^(--- |PASS|FAIL|ok|rc=)' $OUT/tests.log | tail -40
gzip -9 $OUT/tests.log
