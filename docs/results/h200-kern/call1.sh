#!/bin/bash
# kern call 1: split-K / KFOLD / PDL tiles on the small-N·M strata shapes, hc_up tiles at M 512,
# fp16 Y, cuBLAS + cuBLASLt in the same rounds, the torch anchor in the same call.
set -u
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda} PYTHONUNBUFFERED=1
B=bin/kern; W=/tmp/kern; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c1.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
gunzip -c $B/tilefit.gz > $W/tilefit && chmod +x $W/tilefit; t=$W/tilefit
. $B/tiles.env
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; $t version; } > $o/env.txt 2>&1
rm -rf "$HOME/.cache/tilefit"
# 0. does the KFOLD source compile (and agree with split K bitwise)?
timeout 100 $t sweep --backend cuda --workload $B/hcr.yaml --family gemm_wgmma --m 256 --rounds 2 --out-type f16 \
  --tiles 64_48_1.ksplit40.pdl1,64_48_1.ksplit40.kfold1,128_48_2.pingpong1.ksplit40.kfold1 --fail-on-error --db $W/t0.db > $o/t0.md 2> $o/t0.err
rc0=$?; echo "t0 exit $rc0" >> $o/t0.err
SG=""; SH=""
if [ $rc0 -ne 0 ]; then
  echo "KFOLD source failed: fallback to the original sources, kfold tiles dropped" | tee -a $o/t0.err
  SG="--source $B/orig_gemm_wgmma.cu"; SH="--source $B/orig_hc_up_wgmma.cu"
  strip() { echo "$1" | tr ',' '\n' | grep -v kfold | paste -sd, -; }
  HCR=$(strip $HCR); K25=$(strip $K25); WO=$(strip $WO)
fi
grep -E "BITWISE|failed|compile" $o/t0.md | head -5; tail -3 $o/t0.err; pack t0
run() { # name yaml family tiles [source]
  /usr/bin/time -f "$1 wall %e s" timeout 150 $t sweep --backend cuda --workload $B/$2 --family $3 --tiles "$4" --out-type f16 --db $W/$1.db ${5:-} > $o/$1.md 2> $o/$1.err
  echo "$1 exit $?" >> $o/$1.err; cp $W/$1.db $o/; tail -n 2 $o/$1.err; pack $1
}
run hcr hcr.yaml gemm_wgmma "$HCR" "$SG"
run k25 k25.yaml gemm_wgmma "$K25" "$SG"
run wo wo.yaml gemm_wgmma "$WO" "$SG"
run hu hu.yaml hc_up_f16,hc_up_wgmma "$HU" ""
timeout 120 python3 $B/torch_fused.py --m 256,512,1024,1983,2048 --secs 0.6 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; grep -iE "hc_up|CHUNK" $o/torch.txt | head; pack torch
run pd pd.yaml gemm_wgmma "$PD" "$SG"
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
pack end
