#!/bin/bash
# kern call 3: the 11 GEMMs with the final default gemm_wgmma sweep; hc_up walk/stage variants; the torch anchor at M 512, 1983.
# cuBLASLt in the same rounds), hc_up tiles + the torch anchor in the same call, W512 tiles.
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PYTHONUNBUFFERED=1
B=bin/kern; W=/tmp/kern; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c3.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
. $B/tiles.env
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
# 1. the 11 GEMMs, default gemm_wgmma sweep (with the split-K extras), cold cache
/usr/bin/time -f "gemm11 wall %e s" timeout 200 $t sweep --backend cuda --workload $B/gemm11.yaml --family gemm_wgmma --out-type f16 --db $W/gemm11.db > $o/gemm11.md 2> $o/gemm11.err
echo "gemm11 exit $?" >> $o/gemm11.err; cp $W/gemm11.db $o/; tail -n 3 $o/gemm11.err; pack gemm11
# 2. hc_up tiles (fp16 mixh), then the torch anchor
/usr/bin/time -f "hu wall %e s" timeout 100 $t sweep --backend cuda --workload $B/hu.yaml --family hc_up_f16,hc_up_wgmma --tiles "$H3" --db $W/hu.db > $o/hu.md 2> $o/hu.err
echo "hu exit $?" >> $o/hu.err; cp $W/hu.db $o/; tail -n 2 $o/hu.err; pack hu
timeout 110 python3 $B/torch_fused.py --m 512,1983 --secs 0.6 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; grep -iE "hc_up" $o/torch.txt | head; pack torch
# 3. the same 11 GEMMs with the old default (the product alone, no extras): the extras' cost in sweep time
/usr/bin/time -f "gemm11old wall %e s" timeout 120 $t sweep --backend cuda --workload $B/gemm11.yaml --family gemm_wgmma --tiles "$PROD" --out-type f16 --db $W/gemm11old.db > $o/gemm11old.md 2> $o/gemm11old.err
echo "gemm11old exit $?" >> $o/gemm11old.err; cp $W/gemm11old.db $o/; tail -n 3 $o/gemm11old.err; pack gemm11old
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
