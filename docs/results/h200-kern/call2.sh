#!/bin/bash
# kern call 2: the 11 strata GEMMs with the new default gemm_wgmma sweep (fp16 Y, cuBLAS +
# cuBLASLt in the same rounds), hc_up tiles + the torch anchor in the same call, W512 tiles.
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PYTHONUNBUFFERED=1
B=bin/kern; W=/tmp/kern; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c2.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
. $B/tiles.env
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
# 1. the 11 GEMMs, default gemm_wgmma sweep (with the split-K extras), cold cache
/usr/bin/time -f "gemm11 wall %e s" timeout 200 $t sweep --backend cuda --workload $B/gemm11.yaml --family gemm_wgmma --out-type f16 --db $W/gemm11.db > $o/gemm11.md 2> $o/gemm11.err
echo "gemm11 exit $?" >> $o/gemm11.err; cp $W/gemm11.db $o/; tail -n 3 $o/gemm11.err; pack gemm11
# 2. hc_up tiles (fp16 mixh), then the torch anchor
/usr/bin/time -f "hu wall %e s" timeout 100 $t sweep --backend cuda --workload $B/hu.yaml --family hc_up_f16,hc_up_wgmma --tiles "$HU" --db $W/hu.db > $o/hu.md 2> $o/hu.err
echo "hu exit $?" >> $o/hu.err; cp $W/hu.db $o/; tail -n 2 $o/hu.err; pack hu
timeout 110 python3 $B/torch_fused.py --m 256,512,1024,1983,2048 --secs 0.6 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; grep -iE "hc_up" $o/torch.txt | head; pack torch
# 3. W512 tiles
/usr/bin/time -f "w512 wall %e s" timeout 80 $t sweep --backend cuda --workload $B/w512.yaml --family gemm_wgmma --tiles "$W5" --out-type f16 --db $W/w512.db > $o/w512.md 2> $o/w512.err
echo "w512 exit $?" >> $o/w512.err; cp $W/w512.db $o/; tail -n 2 $o/w512.err
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
