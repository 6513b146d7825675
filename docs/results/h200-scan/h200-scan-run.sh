#!/usr/bin/env bash
# The size study (tilefit scan, issue 11 item 1) on the H200 machine: CPU
# and GPU in one table. Built here with
#   CGO_ENABLED=0 go build -o bin/tilefit ./cmd/tilefit
# and run on the GPU machine from the repository root with bin/ carried:
#   bash docs/results/h200-scan/h200-scan-run.sh "$OUT" [STEP ...]
# STEPs: devices gpu cpu table (default: all). Every step resumes: a step cut
# short by a time limit is finished by running it again (nothing stored is
# measured twice), so the steps may also run in separate calls.
set -u
out=${1:-out}
shift || true
steps=${*:-devices gpu cpu table}
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$out"
t=${TILEFIT:-./bin/tilefit}
db="$out/scan.db"
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
# The CPU tiles: the reference and four 8-thread tiles (the default sweep's
# tiles use 1 or 2 threads; the machine has 16 cores and OpenBLAS uses all).
tiles=cpu:64_128_2,cpu:64_128_8,cpu:128_128_8,cpu:128_256_8,cpu:64_256_8
# The GPU tiles: the mma.sync reference and three of its large tiles, and
# the gemm_wgmma tiles that won the square and large cells before
# (h200-wgmma.md); the small-M family gemm_stream is left out (square
# sizes are not its cells).
tiles=$tiles,cuda:128_128_4,cuda:64_128_4,cuda:128_64_4,cuda:128_256_8,cuda:gemm_wgmma/128_256_2,cuda:gemm_wgmma/128_128_2.pingpong1,cuda:gemm_wgmma/128_192_2,cuda:gemm_wgmma/64_128_1,cuda:gemm_wgmma/64_256_2.pingpong1
fams=cpu:gemm_f16,cuda:gemm_f16,cuda:gemm_wgmma
# OpenBLAS for the CPU's vendor column: the machine's image has none, so
# Debian's libopenblas0-pthread (with libgfortran5, libquadmath0) travels
# packed in .blas/ (carry .blas) and is unpacked here.
if [ -f .blas/blas.tar.xz ]; then
  mkdir -p /tmp/blas && tar xJf .blas/blas.tar.xz -C /tmp/blas
  export LD_LIBRARY_PATH=/tmp/blas/usr/lib/x86_64-linux-gnu/openblas-pthread:/tmp/blas/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

if has devices; then
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > "$out/smi.txt" 2>&1
  { lscpu; echo; cc --version || gcc --version; } > "$out/lscpu.txt" 2>&1
  $t version > "$out/version.txt" 2>&1
  # Ceilings of both devices (copy bandwidth, vendor matmul peak), stored for the scan.
  $t devices --db "$db" > "$out/devices.txt" 2>&1
fi
# The GPU: the CUDA tiles above (gemm_f16 and gemm_wgmma) and cuBLAS at
# 64³ … 8192³, with the Laplacian known-answer check on every cell.
has gpu && /usr/bin/time -f "gpu scan wall %e s" timeout 240 $t scan --backend cuda --db "$db" --family "$fams" --tiles "$tiles" --check laplacian \
  > "$out/scan-gpu.md" 2> "$out/scan-gpu.err"
has gpu && echo "gpu scan exit $?" >> "$out/scan-gpu.err"
# The CPU: OpenBLAS and the tiles above; sizes over a minute skipped.
has cpu && /usr/bin/time -f "cpu scan wall %e s" timeout 240 $t scan --backend cpu --db "$db" --family "$fams" --tiles "$tiles" --check laplacian \
  --size-budget 60s > "$out/scan-cpu.md" 2> "$out/scan-cpu.err"
has cpu && echo "cpu scan exit $?" >> "$out/scan-cpu.err"
# The combined table and plot, from the database (nothing is measured again).
if has table; then
  $t scan --db "$db" --family "$fams" --tiles "$tiles" --check laplacian --size-budget 60s --plots "$out/plots" > "$out/scan.md" 2> "$out/scan.err"
  $t scan --db "$db" --family "$fams" --tiles "$tiles" --check laplacian --size-budget 60s --format json > "$out/scan.json" 2>> "$out/scan.err"
  $t report --db "$db" --format json --output "$out/report.json" 2>> "$out/scan.err"
fi
