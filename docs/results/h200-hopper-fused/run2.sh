#!/bin/bash
# hopper call 2: checks (new tiles, cuBLASLt), the fused operators' sweep, a GEMM sweep with the cublaslt column, PDL A/Bs, torch anchor.
export CUDA_HOME=/usr/local/cuda
B=$(pwd)/bin/hopper
O=${OUT:-/tmp/out}; mkdir -p $O/r
cd $B && gunzip -kf tilefit.gz && chmod +x tilefit cuda.test && cd - >/dev/null
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > $O/r/smi.txt 2>&1
date -u > $O/r/times.txt
export TILEFIT_CUDA_CACHE=/tmp/tfcache
echo "== check $(date -u +%T)" >> $O/r/times.txt
TILEFIT_OUT=$O/r timeout 120 $B/cuda.test -test.run 'TestHopperFused$|TestCuBLASLtGemm$' -test.v > $O/r/check.log 2>&1; echo "rc $?" >> $O/r/times.txt
FAMS=hc_up_f16,hc_up_wgmma,swiglu_f16,swiglu_wgmma
if grep -qE "context is lost|LAUNCH_FAILED|ILLEGAL|panic:" $O/r/check.log; then FAMS=hc_up_f16,swiglu_f16,swiglu_wgmma; echo "sweep families $FAMS" >> $O/r/times.txt; fi
echo "== fused sweep $(date -u +%T)" >> $O/r/times.txt
( time timeout 150 $B/tilefit sweep --backend cuda --workload strata --family $FAMS --db $O/r/fused.db ) > $O/r/sweep.md 2> $O/r/sweep.err; echo "rc $?" >> $O/r/times.txt
echo "== gemm sweep $(date -u +%T)" >> $O/r/times.txt
( time timeout 110 $B/tilefit sweep --backend cuda --workload strata --family gemm_wgmma --tiles 128_256_2,128_128_2.pingpong1,128_192_2 --out-type f16 --m 256,1983 --db $O/r/gemm.db ) > $O/r/gemm.md 2> $O/r/gemm.err; echo "rc $?" >> $O/r/times.txt
echo "== ab $(date -u +%T)" >> $O/r/times.txt
timeout 25 $B/tilefit ab --backend cuda --workload $B/sw_ab.yaml --family swiglu_wgmma --a tile:128_160_2 --b tile:128_160_2.pdl1 --rounds 12 > $O/r/ab_sw1.md 2>&1
timeout 25 $B/tilefit ab --backend cuda --workload $B/sw_ab.yaml --family swiglu_wgmma --a tile:64_128_1.ksplit20 --b tile:64_128_1.ksplit20.pdl1 --rounds 12 > $O/r/ab_sw2.md 2>&1
timeout 25 $B/tilefit ab --backend cuda --workload $B/hc_ab.yaml --family hc_up_wgmma --a tile:128_128_2.pingpong1 --b tile:128_128_2.pingpong1.pdl1 --rounds 12 > $O/r/ab_hc.md 2>&1
echo "rc $?" >> $O/r/times.txt
echo "== torch $(date -u +%T)" >> $O/r/times.txt
timeout 130 python3 $B/torch_fused.py --m 256,1024,1983 --secs 1.0 > $O/r/torch.txt 2>&1; echo "rc $?" >> $O/r/times.txt
date -u >> $O/r/times.txt
cd $O && tar czf r.tgz r && cd - >/dev/null
cat $O/r/times.txt
echo "== check"; grep -E "^(--- |ok|FAIL|PASS)|DIFFERS|FLOAT64|FAULT|compiled|context|cublaslt|unfused" $O/r/check.log | grep -v "^    hopper_test.go:80: K=.*: ok$" | head -50
echo "== sweeps"; tail -2 $O/r/sweep.err; grep -E "^\| (hc_up|Wshgu) .*\| *(256|512|1024|1983|2048) \||BITWISE" $O/r/sweep.md | head -16; tail -2 $O/r/gemm.err
echo "== ab"; for f in $O/r/ab_*.md; do grep -E "^\| (Wshgu|hc_up)" $f; done
echo "== torch"; grep -E "hc_up|swiglu|CHUNK" $O/r/torch.txt
