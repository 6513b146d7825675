#!/usr/bin/env bash
# The seeds' swizzle experiment made reproducible (issue 11 item 9): the CUDA
# gemm_f16 block-order variants (SWZ 1 = GROUP tile rows at a time, 2 = GROUP
# tile columns at a time, 3 = transposed; GROUP 2, 8, 16) against the default
# row-major order (SWZ 0) on the 13 strata shapes as plain GEMMs
# (h200-final-gemm13.yaml), starting from the policy
# selected on the H200 (docs/results/h200-strata/h200-policy.json).
#
# Built here with
#   CGO_ENABLED=0 go build -o bin/tilefit ./cmd/tilefit
# and run on the GPU machine from the repository root with bin/ carried:
#   bash docs/results/h200-swizzle/h200-swizzle.sh "$OUT" [STEP ...]
# STEPs (default: all, about 6–8 minutes):
#   ab      per variant V: tilefit ab --a policy:h200-policy.json --b policy:(the
#           same rules, every tile T replaced by T.V): per cell the ratio, interval,
#           verdict and bitwise; per chunk (M 256 and 1983, and both) the totals
#           A vs B with their interval and verdict
#   sweep   every tile of the policy and its variants swept on the strata shapes
#           at M 256 and 1983 (ALL BITWISE expected: the order of the blocks
#           does not change a block's reduction)
#   select  tilefit select on that sweep with the policy as --baseline: a cell
#           departs only where a tile (a variant or another) is confirmed faster
# Outputs land in $OUT (the policies, Markdown and JSON of each step, the
# select policy and report); everything but the database is also packed into
# $OUT/results.tgz. The summary lines at the end (per variant: the chunk
# total ratio B/A over every M, its interval and verdict) go into
# docs/results/h200-swizzle/README.md with the command.
set -u
out=${1:-out}
shift || true
steps=${*:-ab sweep select}
has() { case " $steps " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$out"
t=${TILEFIT:-./bin/tilefit}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
pol=docs/results/h200-strata/h200-policy.json
ms=256,1983
variants=${VARIANTS:-"swz1 swz1.group2 swz1.group16 swz2 swz2.group2 swz3"}
budget=${BUDGET:-500ms}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > "$out/smi.txt" 2>&1

# The variant policies: every rule's tile T (and the default) becomes T.V.
for v in $variants; do
  sed -E 's/"(tile|default)": "([0-9]+_[0-9]+_[0-9]+)"/"\1": "\2.'"$v"'"/g' "$pol" > "$out/policy-$v.json"
done

# 1. Chunk totals per variant: the shipped policy (A) against the same rules
#    in another block order (B), cell by cell in fresh paired rounds.
if has ab; then
  for v in $variants; do
    /usr/bin/time -f "ab $v wall %e s" timeout 150 $t ab --backend cuda --family gemm_f16 --workload docs/results/h200-final/h200-final-gemm13.yaml --m "$ms" \
      --a "policy:$pol" --b "policy:$out/policy-$v.json" --rounds auto --budget "$budget" --format json \
      > "$out/ab-$v.json" 2> "$out/ab-$v.err"
    echo "ab $v exit $?" >> "$out/ab-$v.err"
  done
fi

# 2. Sweep every tile the policy names with its variants (M 256 and 1983).
if has sweep; then
  tiles=$(sed -nE 's/.*"(tile|default)": "([0-9]+_[0-9]+_[0-9]+)".*/\2/p' "$pol" | sort -u)
  list=""
  for b in $tiles; do
    list="$list,$b"
    for v in $variants; do list="$list,$b.$v"; done
  done
  /usr/bin/time -f "sweep wall %e s" timeout 300 $t sweep --backend cuda --family gemm_f16 --workload docs/results/h200-final/h200-final-gemm13.yaml --m "$ms" \
    --tiles "${list#,}" --db "$out/swizzle.db" > "$out/sweep.md" 2> "$out/sweep.err"
  echo "sweep exit $?" >> "$out/sweep.err"
fi

# 3. Select with the shipped policy as the baseline: a variant takes a cell only
#    where it is confirmed faster than the shipped tile in a fresh paired round.
if has select; then
  /usr/bin/time -f "select wall %e s" timeout 200 $t select --backend cuda --family gemm_f16 --workload docs/results/h200-final/h200-final-gemm13.yaml --m "$ms" \
    --db "$out/swizzle.db" --baseline "$pol" --budget "$budget" --out "$out/policy-swizzle.json" \
    > "$out/select.md" 2> "$out/select.err"
  echo "select exit $?" >> "$out/select.err"
  $t report --db "$out/swizzle.db" --workload docs/results/h200-final/h200-final-gemm13.yaml --policy "$out/policy-swizzle.json" > "$out/report.md" 2>> "$out/select.err"
fi

tar czf "$out/results.tgz" -C "$out" --exclude '*.db' --exclude '*.db-*' --exclude '*.lock' --exclude results.tgz .
for f in "$out"/*.err; do echo "== $f"; tail -n 3 "$f"; done
# Summary: per variant, the total over every M (the "m": 0 total of ab's JSON).
for v in $variants; do
  [ -s "$out/ab-$v.json" ] || continue
  tr -d ' \n' < "$out/ab-$v.json" | grep -oE '\{"m":0,[^}]*\}' | sed "s/^/$v /"
done
grep -E '^\*\*(ALL|NOT)' "$out/sweep.md" 2>/dev/null | head -2
