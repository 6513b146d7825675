#!/bin/bash
# fused9's second H200 call (issue 16: PDL 2 on gemm_wgmma and swiglu_wgmma, the same core hook as
# hc_up's). Binaries built at the commit named in README.md (as call1.sh says, into bin/f9b), with
# torch_fused.py, torch_sw.py, unxz.py and this script copied beside them; run from the repository
# root, carrying bin/f9b:  bash bin/f9b/call2.sh
# Steps: (1) the device tests of the wgmma families with the new PDL 2 tiles (TestHopperFused,
# TestWgmmaThroughPlan, TestWgmmaSplitK); (2) swiglu over the strata M, each winner of h200-final11
# beside its PDL 2 twin, 24 rounds, every tile every round; (3) the torch anchor's SwiGLU rows;
# (4) the 11 plain strata GEMMs, fp16 Y, the most frequent winners of h200-final11 beside their PDL 2
# twins, 16 rounds; (5) gemm_decode: its device tests with the PRE cases, then sq4096, Wout and sq8192
# (h200-decode4's workloads), each shape's default beside PDL 2 twins with PRE 1–8 and with rings that
# hold more of a CTA's weights, 12 rounds, and the tool's copy bandwidth. Packs $OUT/c.tgz after every step.
set -u
export PYTHONUNBUFFERED=1
B=bin/f9b; W=/tmp/f9b; rm -rf $W; mkdir -p $W/o; o=$W/o
T0=$(date +%s)
el() { echo $(( $(date +%s) - T0 )); }
pack() { tar czf $OUT/c.tgz -C $W o; echo "[t=$(el)s] packed after $1"; }
python3 $B/unxz.py $B/tilefit.xz $W/tilefit && chmod +x $W/tilefit
python3 $B/unxz.py $B/cuda.test.xz $W/cuda.test && chmod +x $W/cuda.test
t=$W/tilefit
{ date -u; nvidia-smi --query-gpu=name,driver_version,power.draw,power.limit,clocks.sm,clocks.max.sm,temperature.gpu --format=csv; nproc; } > $o/env.txt 2>&1
# 1. device tests
(cd backend/cuda && TILEFIT_OUT=$o timeout 150 $W/cuda.test -test.run '^(TestHopperFused|TestWgmmaThroughPlan|TestWgmmaSplitK)$' -test.v -test.count=1 > $o/tests.log 2>&1; echo "tests exit $?" >> $o/tests.log)
grep -E "^(--- |ok|FAIL|PASS)|tests exit|DIFFER|differ" $o/tests.log | head -12; pack tests
# 2. swiglu
SW=${SW:-64_80_1.ksplit20.pdl1,64_80_1.ksplit20.pdl2,64_160_1.ksplit20,64_160_1.ksplit20.pdl2,128_80_2.pdl1,128_80_2.pdl2,128_160_2.pdl1,128_160_2.pdl2,128_160_2.pdl1.epi1,128_160_2.pdl2.epi1}
timeout 100 $t sweep --backend cuda --workload strata --family swiglu_wgmma --tiles $SW --m 256,512,1024,1983,2048 --rounds 24 --race=false --vendor=false --db $W/sw.db > $o/sw.md 2> $o/sw.err
echo "sw exit $?" >> $o/sw.err; cp $W/sw.db $o/sw.db 2>/dev/null; gzip -9 $o/sw.db
grep -E "^(ALL|NOT|BATCH)" $o/sw.md; tail -2 $o/sw.err; pack sw
# 3. the torch anchor's SwiGLU rows, same call
timeout 40 python3 $B/torch_sw.py --m 256,512,1024,1983,2048 --secs 0.6 --json $o/torch.json > $o/torch.txt 2>&1
echo "torch exit $?" >> $o/torch.txt; tail -11 $o/torch.txt; pack torch
# 4. the plain GEMMs
GM=${GM:-128_160_2.epi1,128_160_2.pdl2.epi1,128_192_2.epi1,128_192_2.pdl2.epi1,128_256_2.epi1,128_256_2.pdl2.epi1,64_24_1.ksplit10.pdl1,64_24_1.ksplit10.pdl2,64_64_1.ksplit20.pdl1,64_64_1.ksplit20.pdl2,64_112_1.ksplit40.pdl1,64_112_1.ksplit40.pdl2,64_96_1.pdl1.epi1,64_96_1.pdl2.epi1}
timeout 200 $t sweep --backend cuda --workload strata --family gemm_wgmma --tiles $GM --m 256,512,1024,1983,2048 --out-type f16 --rounds 16 --race=false --vendor=false --db $W/gm.db > $o/gm.md 2> $o/gm.err
echo "gm exit $?" >> $o/gm.err; cp $W/gm.db $o/gm.db 2>/dev/null; gzip -9 $o/gm.db
grep -E "^(ALL|NOT|BATCH)" $o/gm.md; tail -2 $o/gm.err; pack gm
# 5. decode
(cd backend/cuda && TILEFIT_OUT=$o timeout 90 $W/cuda.test -test.run '^TestDecode' -test.v -test.count=1 > $o/dtests.log 2>&1; echo "dtests exit $?" >> $o/dtests.log)
grep -E "^(--- |ok|FAIL|PASS)|exit|differ" $o/dtests.log | head -12; pack dtests
pre() { echo "$1" | tr ',' '\n' | sed "s|^|gemm_decode/|" | paste -sd, -; }
D=32_8.ksplit16.kw4.tk128.stages16; C=64_8.ksplit16.kw2.kc2.tk128
SQ4=${SQ4:-$D.pdl1.lp2,$D.pdl2.lp2,$D.pdl2.lp2.pre1,$D.pdl2.lp2.pre2,$D.pdl2.lp2.pre4,$D.pdl2.lp2.pre8,$C.stages8.pdl2.lp2,$C.stages10.pdl1.lp2,$C.stages10.pdl2.lp2,$C.stages10.pdl2.lp2.pre4,128_16.ksplit16.kc4.tk64.stages10.pdl2.lp2}
T=40_10.ksplit24.kw2.kc2.tk128
WO=${WO:-$T.stages8.pdl1.lp2,$T.stages8.pdl2.lp2,$T.stages8.pdl2.lp2.pre2,$T.stages8.pdl2.lp2.pre4,$T.stages12.pdl2.lp2,$T.stages14.pdl1.lp2,$T.stages14.pdl2.lp2,$T.stages14.pdl2.lp2.pre4,80_10.ksplit24.kc4.tk64.stages16.pdl2.lp2}
P=64_4.tk128
SQ8=${SQ8:-$P.stages8.pdl1.lp2,$P.stages8.pdl2.lp2,$P.stages8.pdl2.lp2.pre1,$P.stages8.pdl2.lp2.pre2,$P.stages8.pdl2.lp2.pre4,$P.stages10.pdl2.lp2}
dsweep() { # name workload tiles
  timeout 60 $t sweep --backend cuda --workload $2 --family gemm_decode --tiles "$3" --out-type f16 --rounds 12 --vendor=false --db $W/dec.db > $o/$1.md 2> $o/$1.err
  echo "$1 exit $?" >> $o/$1.err; tail -1 $o/$1.err; grep -E "^(ALL|NOT|BATCH)" $o/$1.md
}
dsweep sq4096 $B/sq4096.yaml "$(pre $SQ4)"; pack sq4096
dsweep wout $B/wout.yaml "$(pre $WO)"; pack wout
dsweep sq8192 $B/sq8192.yaml "$(pre $SQ8)"; pack sq8192
timeout 15 $t devices --backend cuda --measure --db $W/dec.db > $o/devices.txt 2>&1; echo "devices exit $?" >> $o/devices.txt
python3 $B/pivot.py $W/dec.db > $o/pivot.txt 2>&1; cat $o/pivot.txt | cut -c1-150
cp $W/dec.db $o/dec.db; gzip -9 $o/dec.db; pack decode
nvidia-smi --query-gpu=power.draw,clocks.sm,temperature.gpu --format=csv >> $o/env.txt 2>&1
echo "done t=$(el)s"; pack end
