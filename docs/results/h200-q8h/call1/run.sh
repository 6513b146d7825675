#!/bin/bash
# q8h device run: device tests of gemm_q8_wgmma and gemm_bias_wgmma, then
# paired-round sweeps. Run from the repository root on the device.
R=$PWD; B=$R/bin/q8h; T=/tmp/q8; mkdir -p $T
for f in cuda.test gemmbias.test; do xz -dc $B/$f.xz > $T/$f 2>/dev/null || python3 -c "import lzma,sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())" $B/$f.xz > $T/$f; chmod +x $T/$f; done
export TILEFIT_OUT=$OUT TILEFIT_CUDA_CACHE=$T/cache XDG_CACHE_HOME=$T/xdg
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit --format=csv > $OUT/gpu.txt 2>&1
s=$SECONDS
(cd backend/cuda && timeout ${Q8T:-100} $T/cuda.test -test.run 'TestHopperQ8$' -test.v -test.count=1 > $OUT/q8test.log 2>&1); echo "q8 test rc=$? $((SECONDS-s)) s" | tee -a $OUT/steps.txt
grep -c ": ok$" $OUT/q8test.log; grep -E "FAIL|DIFFERS|local [1-9]|error|panic" $OUT/q8test.log | head -20
s=$SECONDS
(cd examples/gemmbias && timeout ${BT:-80} $T/gemmbias.test -test.run 'TestHopper' -test.v -test.count=1 > $OUT/biastest.log 2>&1); echo "bias test rc=$? $((SECONDS-s)) s" | tee -a $OUT/steps.txt
grep -E "^(---|ok|FAIL)|differ" $OUT/biastest.log | head -20
[ -n "$NOSWEEP" ] && exit 0
cd examples/gemmbias
s=$SECONDS
TILEFIT_CLI="sweep --backend cuda --workload $B/q8.yaml --family gemm_q8_f16,gemm_q8_wgmma --tiles 64_128_4,128_128_8,128_256_8,gemm_q8_wgmma/128_256_2,gemm_q8_wgmma/128_128_2,gemm_q8_wgmma/128_128_2.pingpong1,gemm_q8_wgmma/128_256_2.pregs56,gemm_q8_wgmma/128_256_2.cvt0,gemm_q8_wgmma/128_160_2,gemm_q8_wgmma/64_128_1 --db $T/q8.db --budget 8s --aa=false" \
  timeout ${QS:-120} $T/gemmbias.test -test.run 'TestCLI$' -test.v > $OUT/q8sweep.md 2>&1; echo "q8 sweep rc=$? $((SECONDS-s)) s" | tee -a $OUT/steps.txt
s=$SECONDS
TILEFIT_CLI="sweep --backend cuda --workload $B/bias.yaml --family gemm_bias_wgmma --tiles 128_256_2,128_128_2,128_128_2.pingpong1,64_128_1 --db $T/bias.db --budget 6s --aa=false --vendor=false" \
  timeout ${BS:-30} $T/gemmbias.test -test.run "TestCLI$" -test.v > $OUT/biassweep.md 2>&1; echo "bias sweep rc=$? $((SECONDS-s)) s" | tee -a $OUT/steps.txt
s=$SECONDS
TILEFIT_CLI="sweep --backend cuda --workload $B/plain.yaml --family gemm_wgmma --tiles 128_256_2,128_128_2,128_128_2.pingpong1,64_128_1 --db $T/plain.db --budget 6s --aa=false" \
  timeout ${PS:-30} $T/gemmbias.test -test.run "TestCLI$" -test.v > $OUT/plainsweep.md 2>&1; echo "plain sweep rc=$? $((SECONDS-s)) s" | tee -a $OUT/steps.txt
cd $T && tar czf $OUT/dbs.tgz q8.db bias.db plain.db 2>/dev/null
grep -E "ALL BITWISE|BATCH|DIFFER|FAIL" $OUT/*sweep.md | head
