#!/usr/bin/env bash
# The H200 run recorded in docs/results/h200-strata/README.md. Built here with
#   CGO_ENABLED=0 go build -o bin/tilefit ./cmd/tilefit
# and run on the GPU machine from the repository root with bin/ carried:
#   bash docs/results/h200-strata/h200-run.sh "$OUT" [STEP ...]
# STEPs: devices isolation sweep select (default: all). Everything but the
# databases is packed into $OUT/results.tgz (the device returns 8 files).
set -u
out=${1:-out}
shift || true
steps=${*:-devices isolation sweep select}
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$out"
t=./bin/tilefit
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > "$out/smi.txt" 2>&1

# 1. Devices and measured ceilings (stored in the database for the report).
has devices && $t devices --db "$out/h200.db" > "$out/devices.txt" 2>&1

# 2. Isolation on the GPU: one tile writes to an illegal address, one never
#    returns; both must be recorded while the other tiles finish.
if has isolation; then
$t families source gemm_f16 --backend cuda | awk '{print} /^extern "C" __global__/{
  print "#if TM == 16 && TN == 32 && WARPS == 1"
  print "\tif (blockIdx.x == 0 && threadIdx.x == 0) *(volatile int *)8 = 1; /* planted: illegal address */"
  print "#elif TM == 16 && TN == 64 && WARPS == 1"
  print "\tfor (;;) asm volatile(\"nanosleep.u32 1000;\"); /* planted: hang */"
  print "#endif"}' > "$out/faulty.cu"
printf 'name: faults\nm: [256, 1983]\nshapes:\n  - {name: Wout, n: 2560, k: 6144, calls: 48}\n  - {name: Walbe, n: 48, k: 2560, calls: 72}\n' > "$out/faults.yaml"
/usr/bin/time -f "isolation wall %e s" timeout 240 $t sweep --backend cuda --workload "$out/faults.yaml" --source "$out/faulty.cu" \
  --tiles 128_128_4,16_32_1,16_64_1,64_128_4,32_64_2 --db "$out/faults.db" --aa=false > "$out/faults.md" 2> "$out/faults.err"
echo "isolation exit $?" >> "$out/faults.err"
fi

# 3. The whole strata sweep: 13 shapes × 5 M × 46 tiles + cublas, compiles included.
has sweep && /usr/bin/time -f "sweep wall %e s" timeout 420 $t sweep --backend cuda --workload strata --db "$out/h200.db" > "$out/strata.md" 2> "$out/strata.err"
has sweep && echo "sweep exit $?" >> "$out/strata.err"

# 4. Select a policy from it (winners confirmed against the reference in fresh paired rounds).
if has select; then
/usr/bin/time -f "select wall %e s" timeout 200 $t select --backend cuda --workload strata --db "$out/h200.db" \
  --out "$out/policy.json" --emit go,c,json --emit-dir "$out/selector" > "$out/select.md" 2> "$out/select.err"
echo "select exit $?" >> "$out/select.err"
$t report --db "$out/h200.db" --workload strata --policy "$out/policy.json" > "$out/report.md" 2>> "$out/select.err"
fi
tar czf "$out/results.tgz" -C "$out" --exclude '*.db' --exclude '*.lock' --exclude results.tgz .
for f in "$out"/*.err; do echo "== $f"; tail -n 4 "$f"; done
