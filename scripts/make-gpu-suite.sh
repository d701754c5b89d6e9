#!/usr/bin/env bash
# Prepares, on a machine with LLVM/MLIR 22 (this one), everything
# scripts/gpu-check.sh needs on a GPU machine that has no LLVM:
#
#   OUT/bin/    shardlin-exec, shardlin-gpu-tests, shardlin-gpu-bench: a
#               runtime-only Release build (no MLIR, no MPI), stripped
#   OUT/lib/    the shared libraries they need that a GPU machine may lack
#               (OpenBLAS and its Fortran runtime); CUDA, cuBLAS and NCCL are
#               NOT carried: gpu-check.sh takes them from the GPU machine
#   OUT/lib-fallback/
#               this machine's libstdc++/libgcc_s, used only if the GPU
#               machine's are older than the ones the binaries were built with
#   OUT/suite/  the end-to-end suite: one directory per configuration with
#               the compiled program (shardlin-run --emit-program), the .npy
#               inputs and the float64 references, and cases.txt listing
#               "name world-size dtype bias" per line, where bias is 0 or 1
#               for a linear layer (x, w[, b]; testing/tools/npytool.py made its
#               data) and "args" for a case that lists its --arg files in
#               its own "args" file: the transformer blocks
#               (shardlin-write-block-suite, with a "bound" file), the
#               f16/bf16 partial-sums, the attention cases and the frontend
#               corpora (torch-mlir, StableHLO, attention; a "check.sh"); and
#               "grad" for the gradient suite (shardlin-write-grad-suite:
#               backward programs, inputs and float64 gradients)
#   OUT/bench-blocks/, OUT/bench-blocks-tiny/
#               the fused block programs of shardlin-gpu-bench's blocks
#               section (shardlin-write-block-suite --bench; blocks.txt lists
#               them), the second small for gpu-check.sh --cpu-selftest
#
# usage: scripts/make-gpu-suite.sh [--out DIR] [--build-dir DIR]
#                                  [--compiler-build DIR] [--suite-only]
#                                  [--quick] [--jobs N]
#   --out DIR             where to write (default build-gpu/pkg; build*/ is
#                         git-ignored, so the device tool carries it with
#                         carry=["build-gpu/pkg"])
#   --build-dir DIR       the runtime-only build (default build-gpu/runtime)
#   --compiler-build DIR  the build with shardlin-run (default build)
#   --suite-only          only (re)generate OUT/suite
#   --quick               a small suite (a few configurations per W)
#
# Then, on the GPU machine: bash scripts/gpu-check.sh --prebuilt build-gpu/pkg
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/build-gpu/pkg"
RT_BUILD="$ROOT/build-gpu/runtime"
COMPILER_BUILD="$ROOT/build"
SUITE_ONLY=0
QUICK=0
JOBS=2

die() { echo "make-gpu-suite: error: $*" >&2; exit 1; }
usage() { sed -n '2,34p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="${2:?--out needs a directory}"; shift 2 ;;
    --out=*) OUT="${1#*=}"; shift ;;
    --build-dir) RT_BUILD="${2:?--build-dir needs a directory}"; shift 2 ;;
    --build-dir=*) RT_BUILD="${1#*=}"; shift ;;
    --compiler-build) COMPILER_BUILD="${2:?--compiler-build needs a directory}"; shift 2 ;;
    --compiler-build=*) COMPILER_BUILD="${1#*=}"; shift ;;
    --suite-only) SUITE_ONLY=1; shift ;;
    --quick) QUICK=1; shift ;;
    --jobs) JOBS="${2:?--jobs needs a number}"; shift 2 ;;
    --jobs=*) JOBS="${1#*=}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case "$JOBS" in ''|*[!0-9]*) die "--jobs must be a positive integer, got '$JOBS'" ;; esac

RUN="$COMPILER_BUILD/bin/shardlin-run"
NPYTOOL="$ROOT/testing/tools/npytool.py"
[ -x "$RUN" ] || die "$RUN not found: build the compiler first (cmake --build $COMPILER_BUILD)"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

# ---- The runtime-only build and its libraries --------------------------------
if [ "$SUITE_ONLY" = 0 ]; then
  echo "make-gpu-suite: runtime-only build in $RT_BUILD"
  cmake -S "$ROOT" -B "$RT_BUILD" -G Ninja -DSHARDLIN_ENABLE_COMPILER=OFF \
    -DSHARDLIN_ENABLE_MPI=OFF -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90 >"$RT_BUILD.configure.log" 2>&1 ||
    { cat "$RT_BUILD.configure.log" >&2; die "configuring the runtime-only build failed"; }
  grep -q "GPU backends enabled" "$RT_BUILD.configure.log" ||
    die "the runtime-only build has no GPU backends (no CUDA toolkit found; see $RT_BUILD.configure.log)"
  cmake --build "$RT_BUILD" -j "$JOBS" --target shardlin-exec shardlin-gpu-tests shardlin-gpu-bench
  rm -rf "$OUT/bin" "$OUT/lib" "$OUT/lib-fallback"
  mkdir -p "$OUT/bin" "$OUT/lib" "$OUT/lib-fallback"
  for exe in shardlin-exec shardlin-gpu-tests shardlin-gpu-bench; do
    cp "$RT_BUILD/bin/$exe" "$OUT/bin/"
    strip "$OUT/bin/$exe"
  done
  # Every library a binary loads that is neither glibc, the C++ runtime, nor
  # CUDA's (which the GPU machine provides, matching its driver).
  ldd "$OUT"/bin/* | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
    while read -r name path; do
      case "$name" in
        libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;
        libcudart.so.*|libcublas.so.*|libcublasLt.so.*|libnccl.so.*) ;;
        libstdc++.so.*|libgcc_s.so.*) cp -L "$path" "$OUT/lib-fallback/$name" ;;
        *) cp -L "$path" "$OUT/lib/$name" ;;
      esac
    done
  git -C "$ROOT" rev-parse HEAD >"$OUT/COMMIT" 2>/dev/null || echo unknown >"$OUT/COMMIT"
fi

# ---- The end-to-end suite ------------------------------------------------------
SUITE="$OUT/suite"
rm -rf "$SUITE"
mkdir -p "$SUITE"
CASES="$SUITE/cases.txt"
: >"$CASES"

# dims joined with 'x' -> MLIR "AxBxK" prefix; empty batch -> 1-D input.
tensor() { # tensor DIMS... DTYPE
  local s="tensor<" d
  local n=$#
  local dt="${!n}"
  for d in "${@:1:$((n - 1))}"; do s+="${d}x"; done
  echo "${s}${dt}>"
}

# linear_mlir DIM N K "P0, P1, ..." "BATCH (space separated)" BIAS(0/1) DTYPE
linear_mlir() {
  local dim=$1 n=$2 k=$3 placements=$4 batch=$5 bias=$6 dt=$7
  local x y b w
  # shellcheck disable=SC2086
  x=$(tensor $batch "$k" "$dt")
  # shellcheck disable=SC2086
  y=$(tensor $batch "$n" "$dt")
  b=$(tensor "$n" "$dt")
  w="!shardlin.sharded<$(tensor "$n" "$k" "$dt"), #shardlin.chunk<dim = $dim, placements = [$placements]>>"
  if [ "$bias" = 1 ]; then
    printf 'func.func @main(%%x: %s, %%w: %s, %%b: %s) -> %s {\n' "$x" "$w" "$b" "$y"
    printf '  %%y = shardlin.linear %%x, %%w, %%b : (%s, %s, %s) -> %s\n' "$x" "$w" "$b" "$y"
  else
    printf 'func.func @main(%%x: %s, %%w: %s) -> %s {\n' "$x" "$w" "$y"
    printf '  %%y = shardlin.linear %%x, %%w : (%s, %s) -> %s\n' "$x" "$w" "$y"
  fi
  printf '  return %%y : %s\n}\n' "$y"
}

# Placements of W ranks: identity, reversed, evens-then-odds.
perm() { # perm KIND W
  local kind=$1 w=$2 i out=()
  case "$kind" in
    id) for ((i = 0; i < w; i++)); do out+=("$i"); done ;;
    rev) for ((i = w - 1; i >= 0; i--)); do out+=("$i"); done ;;
    evenodd)
      for ((i = 0; i < w; i += 2)); do out+=("$i"); done
      for ((i = 1; i < w; i += 2)); do out+=("$i"); done ;;
  esac
  local IFS=,
  echo "${out[*]}" | sed 's/,/, /g'
}

# The size of the sharded dim that leaves empty chunks at W (as
# integration_test/EndToEnd/E2ESupport.cpp): 5 over 4, 3 over 5, 6 over 8, else W-1.
empty_size() {
  case "$1" in 4) echo 5 ;; 5) echo 3 ;; 8) echo 6 ;; *) echo $(($1 - 1)) ;; esac
}

SEED=1000
NCASES=0
# add_case NAME W DIM N K PLACEMENTS "BATCH" BIAS DTYPE STRATEGY
add_case() {
  local name=$1 w=$2 dim=$3 n=$4 k=$5 placements=$6 batch=$7 bias=$8 dt=$9 strategy=${10}
  local dir="$SUITE/$name"
  mkdir -p "$dir"
  linear_mlir "$dim" "$n" "$k" "$placements" "$batch" "$bias" "$dt" >"$dir/linear.mlir"
  "$RUN" "$dir/linear.mlir" --strategy="$strategy" --emit-program="$dir/program.prog" ||
    die "compiling $name failed"
  SEED=$((SEED + 1))
  local biasflag=() shape
  [ "$bias" = 1 ] && biasflag=(--bias)
  shape=$(echo "$batch" | tr ' ' 'x')
  python3 "$NPYTOOL" gen-linear --n "$n" --k "$k" --batch-shape "$shape" \
    --world-size "$w" "${biasflag[@]}" --dtype "$dt" --seed "$SEED" --out-dir "$dir" ||
    die "making the data of $name failed"
  echo "$name $w $dt $bias" >>"$CASES"
  NCASES=$((NCASES + 1))
}

echo "make-gpu-suite: generating the end-to-end suite in $SUITE"
for w in 1 2 3 4 5 6 7 8; do
  strategies=(activations)
  [ "$w" -gt 1 ] && strategies+=(gather-weight)
  for dim in 1 0; do
    side=$([ "$dim" = 1 ] && echo row || echo col)
    for strategy in "${strategies[@]}"; do
      st=$([ "$strategy" = activations ] && echo act || echo gw)
      # Uneven 11 x 19 with a bias, placements reversed.
      add_case "${side}_W${w}_uneven_rev_f32_${st}" "$w" "$dim" 11 19 "$(perm rev "$w")" "5" 1 f32 "$strategy"
      [ "$QUICK" = 1 ] && continue
      # Empty chunks: the sharded dim from empty_size, 1-D input, no bias.
      if [ "$w" -gt 1 ]; then
        e=$(empty_size "$w")
        if [ "$dim" = 1 ]; then n=7 k=$e; else n=$e k=7; fi
        add_case "${side}_W${w}_empty_evenodd_f32_${st}" "$w" "$dim" "$n" "$k" "$(perm evenodd "$w")" "" 0 f32 "$strategy"
      fi
    done
  done
  [ "$QUICK" = 1 ] && continue
  # Every other dtype, one sharding dim each (alternating with W), 3-D or
  # 2-D inputs, both strategies across W.
  s1=activations; s2=gather-weight
  [ "$w" = 1 ] && s2=activations
  add_case "W${w}_bf16_3d" "$w" $((w % 2)) 11 19 "$(perm evenodd "$w")" "2 3" 1 bf16 "$s1"
  add_case "W${w}_f16_nobias" "$w" $(((w + 1) % 2)) 11 19 "$(perm rev "$w")" "5" 0 f16 "$s2"
  add_case "W${w}_f64" "$w" $((w % 2)) 11 19 "$(perm id "$w")" "4" 1 f64 "$s2"
done
if [ "$QUICK" = 0 ]; then
  # Larger uneven shapes (67 x 97, 21 rows): cuBLAS's tensor-core kernels.
  for w in 3 8; do
    for dim in 1 0; do
      side=$([ "$dim" = 1 ] && echo row || echo col)
      for dt in f32 bf16; do
        add_case "${side}_W${w}_large_${dt}_act" "$w" "$dim" 67 97 "$(perm evenodd "$w")" "3 7" 1 "$dt" activations
        add_case "${side}_W${w}_large_${dt}_gw" "$w" "$dim" 67 97 "$(perm rev "$w")" "3 7" 1 "$dt" gather-weight
      done
    done
  done
fi

# The f16/bf16 K split whose per-rank partial products overflow the dtype
# although the result does not (test/shardlin-run/partial-sums.mlir): the
# partial sums must stay f32 until the reduction, on every backend. Each
# case's check.sh runs partial_sums.py's own check (its bound is not a
# multiple of the scale alone).
PS_INPUTS="$ROOT/test/shardlin-run/Inputs"
cp "$PS_INPUTS/partial_sums.py" "$NPYTOOL" "$SUITE/"
for dt in f16 bf16; do
  for strategy in activations gather-weight; do
    name="partial_sums_${dt}_$strategy"
    dir="$SUITE/$name"
    mkdir -p "$dir"
    "$RUN" "$PS_INPUTS/partial-sums-$dt.mlir" --strategy="$strategy" --emit-program="$dir/program.prog" ||
      die "compiling $name failed"
    python3 "$SUITE/partial_sums.py" gen --dtype "$dt" --out-dir "$dir" >/dev/null ||
      die "making the data of $name failed"
    printf '%s\n' 'x.{rank}.npy' w.npy b.npy >"$dir/args"
    printf '#!/bin/sh\n# $1: the outputs (with {rank})\nd=$(dirname "$0")\nexec python3 "$d/../partial_sums.py" check --dtype %s --dir "$d" --out "$1"\n' "$dt" >"$dir/check.sh"
    echo "$name 2 $dt args" >>"$CASES"
    NCASES=$((NCASES + 1))
  done
done

# Issue 41's attention (docs/attention.md): examples/attention/layer.mlir
# and attention sub-blocks (KV replicated and sliced, GQA groups with a
# mask, ranks without heads; f32 and bf16), their inputs and float64
# references from testing/tools/attention_ref.py; each case's check.sh runs
# its check (every rank, f32 1e-5 and bf16 3 * 2^-8 of the largest value).
ATTN="$SUITE/attention"
mkdir -p "$ATTN"
cp "$ROOT/testing/tools/attention_ref.py" "$NPYTOOL" "$ATTN/"
attn_case() { # NAME W DTYPE: the case's directory holds the program's data
  printf '#!/bin/sh\n# $1: the outputs (with {rank})\nd=$(dirname "$0")\nexec python3 "$d/../attention/attention_ref.py" check --dir "$d" --out "$1" --world-size %s --dtype %s\n' "$2" "$3" >"$SUITE/$1/check.sh"
  echo "$1 $2 $3 args" >>"$CASES"
  NCASES=$((NCASES + 1))
}
dir="$SUITE/attention_layer_W3_f32"
python3 "$ATTN/attention_ref.py" gen-layer --seed 4100 --out-dir "$dir" ||
  die "making the data of the attention layer failed"
"$RUN" "$ROOT/examples/attention/layer.mlir" --emit-program="$dir/program.prog" ||
  die "compiling the attention layer failed"
printf '%s\n' 'x.{rank}.npy' n1.npy wq.npy wk.npy wv.npy wo.npy cos.npy sin.npy \
  n2.npy wg.npy wu.npy wd.npy >"$dir/args"
attn_case attention_layer_W3_f32 3 f32
# NAME HQ HKV W DTYPE [--mask]
for c in "attention_12_4_W8_bf16 12 4 8 bf16" "attention_25_5_W4_mask_f32 25 5 4 f32 --mask" \
         "attention_3_1_W4_f32 3 1 4 f32"; do
  read -r name hq hkv w dt mask <<<"$c"
  dir="$SUITE/$name"
  python3 "$ATTN/attention_ref.py" gen-block --hq "$hq" --hkv "$hkv" --world-size "$w" \
    --dtype "$dt" ${mask:+"$mask"} --seed "$((4100 + hq))" --out-dir "$dir" ||
    die "making the data of $name failed"
  "$RUN" "$dir/block.mlir" --emit-program="$dir/program.prog" || die "compiling $name failed"
  printf '%s\n' 'x.{rank}.npy' wq.npy wk.npy wv.npy wo.npy cos.npy sin.npy >"$dir/args"
  [ -n "$mask" ] && echo mask.npy >>"$dir/args"
  attn_case "$name" "$w" "$dt"
done

# The attention's generated backward (--shardlin-generate-backward, dx and
# every weight's gradient of every rank against attention_ref.py's float64
# gradients; the check-grads bounds: f32 1e-5, bf16 8 * 2^-8): gradient cases
# of gpu-check.sh with an "outs" file (the backward's outputs) and a check.sh
# that takes the outputs' directory.
OPT="$COMPILER_BUILD/bin/shardlin-opt"
attn_grad_case() { # NAME W DTYPE MLIR ENTRY ARGS OUTS CHECKS
  local name=$1 w=$2 dt=$3 mlir=$4 entry=$5 args=$6 outs=$7 checks=$8 dir="$SUITE/$1" g
  "$OPT" "$mlir" '--shardlin-generate-backward=recompute=always' -o "$dir/backward.mlir" ||
    die "differentiating $name failed"
  "$RUN" "$dir/backward.mlir" --entry="$entry" --world-size="$w" \
    --emit-program="$dir/backward.prog" || die "compiling $name's backward failed"
  rm -f "$dir/backward.mlir"
  printf '%s\n' $args >"$dir/args"
  printf '%s\n' $outs >"$dir/outs"
  {
    printf '#!/bin/sh\n# $1: the directory of the outputs\nd=$(dirname "$0")\n'
    printf 'exec python3 "$d/../attention/attention_ref.py" check-grads --dir "$d" --world-size %s --dtype %s' "$w" "$dt"
    for g in $checks; do printf ' --grad "%s=$1/%s"' "${g%%=*}" "${g#*=}"; done
    printf '\n'
  } >"$dir/check.sh"
  echo "$name $w $dt grad" >>"$CASES"
  NCASES=$((NCASES + 1))
}
BLOCK_ARGS='x.{rank}.npy wq.npy wk.npy wv.npy wo.npy cos.npy sin.npy dy.{rank}.npy'
# NAME HQ HKV W DTYPE: KV heads replicated to 8 ranks (their gradients summed
# over the ranks), uneven heads, ranks without heads, bf16.
for c in "grad_attention_12_4_W8_f32 12 4 8 f32" "grad_attention_7_7_W3_f32 7 7 3 f32" \
         "grad_attention_2_2_W4_f32 2 2 4 f32" "grad_attention_12_4_W8_bf16 12 4 8 bf16"; do
  read -r name hq hkv w dt <<<"$c"
  dir="$SUITE/$name"
  python3 "$ATTN/attention_ref.py" gen-block --hq "$hq" --hkv "$hkv" --world-size "$w" \
    --dtype "$dt" --grad --seed "$((4200 + hq))" --out-dir "$dir" ||
    die "making the data of $name failed"
  # K and V's gradients: each rank's whole one where the heads are
  # replicated (W > Hkv), else the chunks, assembled.
  kv='dwk.npy dwv.npy'
  [ "$w" -gt "$hkv" ] && kv='dwk.{rank}.npy dwv.{rank}.npy'
  read -r dk dv <<<"$kv"
  attn_grad_case "$name" "$w" "$dt" "$dir/block.mlir" block_backward "$BLOCK_ARGS" \
    "dx.{rank}.npy dwq.npy $dk $dv dwo.npy dcos.{rank}.npy dsin.{rank}.npy" \
    "x=dx.{rank}.npy wq=dwq.npy wk=$dk wv=$dv wo=dwo.npy"
done
name=grad_attention_layer_W3_f32
dir="$SUITE/$name"
python3 "$ATTN/attention_ref.py" gen-layer --grad --seed 4300 --out-dir "$dir" ||
  die "making the data of $name failed"
attn_grad_case "$name" 3 f32 "$ROOT/examples/attention/layer.mlir" layer_backward \
  'x.{rank}.npy n1.npy wq.npy wk.npy wv.npy wo.npy cos.npy sin.npy n2.npy wg.npy wu.npy wd.npy dy.{rank}.npy' \
  'dx.{rank}.npy dn1.{rank}.npy dwq.npy dwk.{rank}.npy dwv.{rank}.npy dwo.npy dcos.{rank}.npy dsin.{rank}.npy dn2.{rank}.npy dwg.npy dwu.npy dwd.npy' \
  'x=dx.{rank}.npy n1=dn1.{rank}.npy wq=dwq.npy wk=dwk.{rank}.npy wv=dwv.{rank}.npy wo=dwo.npy n2=dn2.{rank}.npy wg=dwg.npy wu=dwu.npy wd=dwd.npy'

# The real-frontend corpus (integration_test/frontends: torch-mlir's exports,
# their parameters as constants that the programs carry): each module's
# program, its x, and a check.sh that runs run_case.py --check-outputs
# against the module's float64 reference.
FRONTENDS="$ROOT/integration_test/frontends"
mkdir -p "$SUITE/frontends/corpus"
cp "$FRONTENDS/run_case.py" "$NPYTOOL" "$SUITE/frontends/"
cp "$FRONTENDS/corpus/cases.json" "$FRONTENDS"/corpus/*.ref.npy \
   "$FRONTENDS"/corpus/*.torch.npy "$SUITE/frontends/corpus/"
for module in "$FRONTENDS"/corpus/*.mlir; do
  case_name="$(basename "$module" .mlir)"
  read -r w dt < <(python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["cases"][sys.argv[2]]
print(c["world_size"], c["dtype"])' "$FRONTENDS/corpus/cases.json" "$case_name")
  name="frontends_$case_name"
  dir="$SUITE/$name"
  mkdir -p "$dir"
  "$RUN" "$module" --emit-program="$dir/program.prog" || die "compiling $name failed"
  cp "$FRONTENDS/corpus/$case_name.x.npy" "$dir/x.npy"
  echo x.npy >"$dir/args"
  printf '#!/bin/sh\n# $1: the outputs (with {rank})\nd=$(dirname "$0")\nexec python3 "$d/../frontends/run_case.py" --corpus "$d/../frontends/corpus" --case %s --check-outputs "$1"\n' "$case_name" >"$dir/check.sh"
  echo "$name $w $dt args" >>"$CASES"
done

# The corpora beside it (run_case.py --corpus): StableHLO legalized to linalg
# (its parameters are arguments, passed whole: each rank takes its chunk) and
# attention as torch-mlir exports it (the modules that run: cases.json's
# "runs").
for corpus in stablehlo attention; do
  mkdir -p "$SUITE/frontends/$corpus"
  cp "$FRONTENDS/$corpus/cases.json" "$FRONTENDS/$corpus"/*.npy \
     "$SUITE/frontends/$corpus/"
  for module in "$FRONTENDS/$corpus"/*.mlir; do
    case_name="$(basename "$module" .mlir)"
    read -r runs w dt params < <(python3 -c 'import json, sys
c = json.load(open(sys.argv[1]))["cases"][sys.argv[2]]
print(int(c.get("runs", True)), c["world_size"], c["dtype"], " ".join(c.get("args", [])))' \
      "$FRONTENDS/$corpus/cases.json" "$case_name")
    [ "$runs" = 1 ] || continue
    name="${corpus}_$case_name"
    dir="$SUITE/$name"
    mkdir -p "$dir"
    "$RUN" "$module" --emit-program="$dir/program.prog" || die "compiling $name failed"
    cp "$FRONTENDS/$corpus/$case_name.x.npy" "$dir/x.npy"
    echo x.npy >"$dir/args"
    for p in $params; do
      cp "$FRONTENDS/$corpus/$p" "$dir/$p"
      echo "$p" >>"$dir/args"
    done
    printf '#!/bin/sh\n# $1: the outputs (with {rank})\nd=$(dirname "$0")\nexec python3 "$d/../frontends/run_case.py" --corpus "$d/../frontends/%s" --case %s --check-outputs "$1"\n' "$corpus" "$case_name" >"$dir/check.sh"
    echo "$name $w $dt args" >>"$CASES"
  done
done

# The transformer blocks (MLP, SwiGLU, residuals, chains; every dtype, W =
# 1..8, uneven, empty and permuted chunks, fused and unfused lowerings): the
# threads suite's list (testing/compiler/BlockTesting.h, blockSuite()) written
# out by a tool of the compiler build.
BLOCKS="$COMPILER_BUILD/bin/shardlin-write-block-suite"
[ -x "$BLOCKS" ] || die "$BLOCKS not found: build it (cmake --build $COMPILER_BUILD --target shardlin-write-block-suite)"
"$BLOCKS" "$SUITE" || die "writing the blocks suite failed"
# The gradient suite (backward functions and their saving forwards, every
# gradient of every rank against float64): GradTesting.h's gradSuite().
GRADS="$COMPILER_BUILD/bin/shardlin-write-grad-suite"
[ -x "$GRADS" ] || die "$GRADS not found: build it (cmake --build $COMPILER_BUILD --target shardlin-write-grad-suite)"
"$GRADS" "$SUITE" || die "writing the gradient suite failed"
NCASES=$(wc -l <"$CASES")

# The programs of shardlin-gpu-bench's blocks section (no data: the bench
# makes its own): the full shapes (--quick: the two large ones, bf16, W = 1
# and 8), and tiny ones for gpu-check.sh --cpu-selftest.
rm -rf "$OUT/bench-blocks" "$OUT/bench-blocks-tiny"
"$BLOCKS" "$OUT/bench-blocks" --bench="$([ "$QUICK" = 1 ] && echo quick || echo full)" ||
  die "writing the bench's block programs failed"
"$BLOCKS" "$OUT/bench-blocks-tiny" --bench=tiny ||
  die "writing the bench's tiny block programs failed"

SIZE=$(du -sk --apparent-size "$OUT" | awk '{print $1}')
echo "make-gpu-suite: $NCASES configurations in $SUITE; $OUT is $((SIZE / 1024)) MiB"
if [ "$SIZE" -gt $((60 * 1024)) ]; then
  echo "make-gpu-suite: warning: over 60 MiB; the device tool carries at most 64 MiB with the working tree" >&2
fi
