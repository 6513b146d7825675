#!/bin/bash
# q8h device run 2: gemm_q8_wgmma after the converter rewrite (fixed per-thread
# offsets, rolling scale prefetch): the device test again, then the sweep with
# the PREGS variants, and gemm_wgmma on the same shapes. Run from the repo root.
R=$PWD; B=$R/bin/q8h; T=/tmp/q8; mkdir -p $T
for f in cuda.test gemmbias.test; do xz -dc $B/$f.xz > $T/$f 2>/dev/null || python3 -c "import lzma,sys; sys.stdout.buffer.write(lzma.open(sys.argv[1]).read())" $B/$f.xz > $T/$f; chmod +x $T/$f; done
export TILEFIT_OUT=$OUT TILEFIT_CUDA_CACHE=$T/cache XDG_CACHE_HOME=$T/xdg
s=$SECONDS
(cd backend/cuda && timeout ${Q8T:-60} $T/cuda.test -test.run 'TestHopperQ8$' -test.v -test.count=1 > $OUT/q8test2.log 2>&1); echo "q8 test rc=$? $((SECONDS-s)) s" | tee -a $OUT/steps2.txt
grep -c ": ok$" $OUT/q8test2.log; grep -E "^--- |FAIL|DIFFERS|error|panic" $OUT/q8test2.log | head -20
cd examples/gemmbias
s=$SECONDS
W=gemm_q8_wgmma
TILEFIT_CLI="sweep --backend cuda --workload $B/q8.yaml --family gemm_q8_f16,gemm_q8_wgmma --tiles 64_128_4,$W/128_128_2,$W/128_128_2.pregs72,$W/128_128_2.pregs88,$W/128_128_2.pregs72.qch2,$W/128_128_2.pingpong1.pregs72,$W/128_160_2.pregs72,$W/128_256_2.pregs88,$W/128_256_2.pregs88.qch12,$W/64_128_1,$W/64_128_1.qch12,$W/128_128_2.cvt0.pregs72 --db $T/q8b.db --budget 8s --aa=false" \
  timeout ${QS:-60} $T/gemmbias.test -test.run 'TestCLI$' -test.v > $OUT/q8sweep2.md 2>&1; echo "q8 sweep rc=$? $((SECONDS-s)) s" | tee -a $OUT/steps2.txt
s=$SECONDS
TILEFIT_CLI="sweep --backend cuda --workload $B/q8plain.yaml --family gemm_wgmma --tiles 128_128_2,128_128_2.pingpong1,64_128_1,128_256_2 --db $T/plain2.db --budget 6s --aa=false" \
  timeout ${PS:-30} $T/gemmbias.test -test.run "TestCLI$" -test.v > $OUT/plainsweep2.md 2>&1; echo "plain sweep rc=$? $((SECONDS-s)) s" | tee -a $OUT/steps2.txt
cd $T && tar czf $OUT/dbs2.tgz q8b.db plain2.db 2>/dev/null
grep -E "ALL BITWISE|BATCH|DIFFER|FAIL" $OUT/*sweep2.md | head
