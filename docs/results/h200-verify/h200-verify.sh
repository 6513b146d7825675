#!/bin/bash
# Issue 17 (branch verify) on the H200: verification on the device, the
# exact check on every family, the strata sweep's time and the race.
#
# Build on the development machine (from the repository root):
#   mkdir -p bin/verify
#   CGO_ENABLED=0 go build -buildvcs=true -ldflags=-s -o bin/verify/tilefit ./cmd/tilefit
#   CGO_ENABLED=0 go test -c -ldflags=-s -o bin/verify/cuda.test ./backend/cuda
#   gzip -9 -f bin/verify/tilefit bin/verify/cuda.test
# then one device call per phase (carry bin/verify), from the repository root:
#   bash docs/results/h200-verify/h200-verify.sh tests        # ~2 min: device verification, the exact check on every family
#   bash docs/results/h200-verify/h200-verify.sh sweep        # the default strata sweep from a cold kernel cache (target ≤ 90 s)
#   bash docs/results/h200-verify/h200-verify.sh exhaustive   # the strata sweep with and without the race, and their chunks (~4 min)
# Each phase leaves its files in $OUT (at most 8; large ones gzipped).
set -u
phase=${1:-tests}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
OUT=${OUT:-/tmp/verify-out}; mkdir -p "$OUT"
R=$(pwd)
W=/tmp/verify; rm -rf $W; mkdir -p $W
gunzip -c bin/verify/tilefit.gz > $W/tilefit && chmod +x $W/tilefit
nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,temperature.gpu --format=csv > "$OUT/gpu-$phase.txt" 2>&1
$W/tilefit version >> "$OUT/gpu-$phase.txt" 2>&1
case $phase in
tests)
	gunzip -c bin/verify/cuda.test.gz > $W/cuda.test && chmod +x $W/cuda.test
	cd "$R/backend/cuda" # the package's testdata
	# TestVerifierOnDevice: the device's Keep/Diff/RowHashes/Specials/Gather against the host's, device-drawn inputs
	#   against kernel.Drawn, a guard violation through Keep. TestDroppedLastKOnDevice: the dropped-last-k kernel
	#   fails the exact check and the probabilistic bound at K 320 … 10240. TestConformance, TestFusedCUDAConformance:
	#   the suite with the exact check on every tile. TestExactSweepCUDA: every CUDA family (wgmma's split-K classes
	#   included) through tune on strata shapes at M 1, 130, 1983, fp32 and fp16 Y, verified on the device.
	timeout 400 $W/cuda.test -test.v -test.timeout 390s \
		-test.run 'TestVerifySourceOnHost|TestVerifierOnDevice|TestDroppedLastKOnDevice|TestConformance$|TestFusedCUDAConformance|TestExactSweepCUDA' \
		> "$OUT/tests.log" 2>&1
	echo "tests exit $?" >> "$OUT/tests.log"
	cd "$R"
	grep -E "^(--- |ok|FAIL|PASS|tests exit)|self-test|exact check|not a failure|left the race|dropped-last-k on the device" "$OUT/tests.log" | head -80
	;;
sweep)
	rm -rf "$HOME/.cache/tilefit/cuda" # a cold kernel cache: compiles are part of the time
	/usr/bin/time -f "sweep wall %e s" $W/tilefit sweep --backend cuda --workload strata --db $W/race.db > "$OUT/sweep.md" 2> "$OUT/sweep.err"
	echo "sweep exit $?" >> "$OUT/sweep.err"
	python3 docs/results/h200-verify/verify-share.py "$OUT/sweep.err" > "$OUT/verify-share.txt" 2>&1
	gzip -c $W/race.db > "$OUT/race.db.gz"
	tail -n 6 "$OUT/sweep.err"; tail -n 1 "$OUT/verify-share.txt"; grep -E "^\*\*|^Left the race" "$OUT/sweep.md"
	;;
exhaustive)
	/usr/bin/time -f "race sweep wall %e s" $W/tilefit sweep --backend cuda --workload strata --db $W/race.db > "$OUT/race.md" 2> "$OUT/race.err"
	echo "race sweep exit $?" >> "$OUT/race.err"
	/usr/bin/time -f "exhaustive sweep wall %e s" $W/tilefit sweep --backend cuda --workload strata --race=false --db $W/full.db > "$OUT/full.md" 2> "$OUT/full.err"
	echo "exhaustive sweep exit $?" >> "$OUT/full.err"
	python3 docs/results/h200-verify/race-chunk.py $W/race.db $W/full.db > "$OUT/race-chunk.txt" 2>&1
	echo "race-chunk exit $?" >> "$OUT/race-chunk.txt"
	tar czf "$OUT/dbs.tgz" -C $W race.db full.db
	tail -n 3 "$OUT/race.err" "$OUT/full.err"; cat "$OUT/race-chunk.txt"
	;;
*)
	echo "phase: tests, sweep or exhaustive" >&2
	exit 2
	;;
esac
