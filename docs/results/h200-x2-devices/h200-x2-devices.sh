#!/bin/bash
# Issue 12, "all GPUs of a host": the strata sweep on one H200 (--device 0)
# and on both H200s of the same 2-GPU host (--devices all), one after the
# other in one call, with the compile cache warmed first so that both pay
# the same for compiles. Done means: both ALL BITWISE, and the wall time of
# --devices all ≤ 0.55 × the single GPU's.
#
# NOT RUN YET: it needs the kind nvidia-h200-x2 and about 5 minutes of
# device time (warm-up ~0.5 min, one GPU ~2 min, two GPUs ~1 min, from the
# 1.6–2 s per cell of the single-GPU sweeps in h200-recheck.md).
#
# Build here (no Go on the GPU machine), into the folder the run carries:
#   cd /work/main && CGO_ENABLED=0 go build -o bin/fleet/tilefit ./cmd/tilefit
# Run with the device tool: kind nvidia-h200-x2, carry ["bin/fleet"],
#   command: bash docs/results/h200-x2-devices/h200-x2-devices.sh
# summary.txt, smi.txt, devices.txt and x2.tgz (both databases and logs)
# come back under $OUT.
set -u
OUT=${OUT:-/tmp/x2-out}
mkdir -p "$OUT"
W=/tmp/x2; rm -rf $W; mkdir -p $W
t=${TILEFIT:-bin/fleet/tilefit}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} XDG_CACHE_HOME=$W/cache
# The tiles of the recorded strata sweep (h200-wgmma-sweep.sh): 6 gemm_f16 +
# 24 gemm_wgmma tiles, + cublas, on the strata workload's gemm_f16 shapes
# (--family: the preset now also holds the fused operators hc_up_f16 and
# swiglu_f16, whose families these tile names do not fit): 11 shapes × 5 M.
FAM=gemm_f16,gemm_wgmma
TILES="128_128_4,64_128_4,64_64_4,32_32_4,32_32_2,32_64_2,gemm_wgmma/128_256_2,gemm_wgmma/128_128_2,gemm_wgmma/128_128_2.pingpong1,gemm_wgmma/128_128_1,gemm_wgmma/128_192_2,gemm_wgmma/128_160_2,gemm_wgmma/128_64_2,gemm_wgmma/128_64_2.pingpong1,gemm_wgmma/128_64_1,gemm_wgmma/128_48_2,gemm_wgmma/128_48_2.pingpong1,gemm_wgmma/128_48_1,gemm_wgmma/64_256_2.pingpong1,gemm_wgmma/64_256_1,gemm_wgmma/64_128_2.pingpong1,gemm_wgmma/64_128_1,gemm_wgmma/64_192_2.pingpong1,gemm_wgmma/64_192_1,gemm_wgmma/64_160_2.pingpong1,gemm_wgmma/64_160_1,gemm_wgmma/64_64_2.pingpong1,gemm_wgmma/64_64_1,gemm_wgmma/64_48_2.pingpong1,gemm_wgmma/64_48_1"

nvidia-smi -L > $OUT/smi.txt 2>&1
nvidia-smi --query-gpu=index,name,uuid,driver_version,clocks.sm,temperature.gpu --format=csv >> $OUT/smi.txt 2>&1
$t devices --measure=false > $OUT/devices.txt 2>&1
cat $OUT/smi.txt $OUT/devices.txt | grep -E "GPU|device " | head

# Warm the compile cache on both devices' behalf (one NVRTC compile per tile).
timeout 120 $t sweep --backend cuda --workload strata --family $FAM --m 1 --rounds 2 --tiles "$TILES" --db $W/warm.db --report=false > $W/warm.md 2> $W/warm.err
echo "warm-up exit $?"

sweep() { # name, device flags…
	local name=$1; shift
	local t0 t1
	t0=$(date +%s.%N)
	timeout 330 $t sweep --backend cuda --workload strata --family $FAM --tiles "$TILES" "$@" --db $W/$name.db --report=false > $W/$name.md 2> $W/$name.err
	echo "$name exit $?" >> $W/$name.err
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' > $W/$name.wall
	echo "$name: $(cat $W/$name.wall) s wall; $(grep -E 'BITWISE|bitwise' $W/$name.md | head -1)"
	grep -E "^swept|cells per device|warning|exit" $W/$name.err
}
sweep one --device 0
sweep two --devices all

one=$(cat $W/one.wall); two=$(cat $W/two.wall)
ratio=$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.3f", b / a }')
bitwise=$(grep -l "^ALL BITWISE" $W/one.md $W/two.md | wc -l)
verdict=FAIL
if [ "$bitwise" = 2 ] && awk -v r="$ratio" 'BEGIN { exit !(r <= 0.55) }'; then verdict=PASS; fi
{
	echo "one GPU (--device 0): $one s; two GPUs (--devices all): $two s; ratio $ratio (want <= 0.55)"
	echo "ALL BITWISE in $bitwise of 2 sweeps"
	grep "cells per device" $W/two.err
	echo "$verdict"
} | tee $OUT/summary.txt
# At most 8 files come back from the device: the rest travels packed.
tar czf $OUT/x2.tgz -C $W one.db two.db one.md two.md one.err two.err one.wall two.wall warm.err 2>/dev/null
