#!/bin/bash
# lead call 8: TestReadCeiling after its ring kernels' barrier setup and slot wait became one function each
# (ring_init, ring_slot). Run: bash bin/lead/call8.sh, carry bin/lead.
set -u
cd backend/cuda
xz -dc ../../bin/lead/cuda.test.xz > /tmp/cuda.test && chmod +x /tmp/cuda.test
timeout 120 /tmp/cuda.test -test.run 'TestReadCeiling' -test.count=1 -test.v > $OUT/ceiling.log 2>&1; echo "rc=$?" >> $OUT/ceiling.log
grep -E '^(--- |PASS|FAIL|ok|rc=)|FAIL|wrong|sum' $OUT/ceiling.log | head -20
