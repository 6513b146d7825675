#!/bin/bash
# kern2 call 1: TMA multicast (MC) tiles beside the current best, same call as the torch anchor.
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PYTHONUNBUFFERED=1
B=bin/kern2; W=/tmp/kern2; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c1.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
. $B/tiles1.env
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
sw() { # name yaml family tiles timeout [extra]
  /usr/bin/time -f "$1 wall %e s" timeout $5 $t sweep --backend cuda --workload $B/$2 --family $3 --tiles "$4" ${6:-} --db $W/$1.db > $o/$1.md 2> $o/$1.err
  echo "$1 exit $?" >> $o/$1.err; cp $W/$1.db $o/ 2>/dev/null; tail -n 2 $o/$1.err; pack $1
}
sw sw sw.yaml swiglu_f16,swiglu_wgmma "$SW" 45
sw hu hu.yaml hc_up_f16,hc_up_wgmma "$HU" 40
timeout 60 python3 $B/torch_fused.py --m 512,1983,2048 --secs 0.3 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; grep -E "CHUNK|hc_up|swiglu" $o/torch.txt | head -30; pack torch
sw w512 w512.yaml gemm_wgmma "$W5" 35 "--out-type f16"
sw wide wide.yaml gemm_wgmma "$WIDE" 45 "--out-type f16"
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
