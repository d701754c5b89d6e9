#!/usr/bin/env bash
# The one prepared script for a GPU machine (see docs/gpu.md): checks first,
# timings last, a short results table at the end, all in a few minutes.
#
# usage: scripts/gpu-check.sh (--prebuilt DIR | --build [--build-dir DIR])
#                             [--suite DIR] [--quick] [--no-bench]
#                             [--cpu-selftest] [--jobs N]
#
#   --prebuilt DIR  use what scripts/make-gpu-suite.sh made on a machine with
#                   LLVM: DIR/bin (shardlin-exec, shardlin-gpu-tests,
#                   shardlin-gpu-bench), DIR/lib, DIR/suite
#   --build         build runtime/ here instead (no LLVM needed: CMake, nvcc,
#                   OpenBLAS and GoogleTest; CUDA from /usr/local/cuda or
#                   from the Python environment's nvidia wheels), into
#                   --build-dir (default build-gpu/check)
#   --suite DIR     the end-to-end suite (default DIR/suite with --prebuilt,
#                   build-gpu/pkg/suite with --build); programs are compiled
#                   where LLVM is, so a --build run needs one carried too
#   --quick         fewer timing repetitions and smaller sizes
#   --no-bench      checks only
#   --cpu-selftest  no GPU needed: runs the end-to-end suite with the threads
#                   backend in place of the GPU backends, to check the suite
#                   and this script on a CPU machine
#   --jobs N        end-to-end configurations run at once (default: the
#                   cores, at most 8; they share the GPU)
#
# Steps: (1) the GPU unit tests (shardlin-gpu-tests, without the timeout
# tests); (2) the end-to-end suite through shardlin-exec on cuda-local (W =
# 1..8 on one GPU) and on nccl (every W up to the number of GPUs), each
# output checked with testing/tools/npytool.py against its float64 reference
# (linear layers and transformer blocks, JOBS at a time);
# (3) the timeout tests (a missing rank must fail within its timeout, not
# hang); (4) the timings (shardlin-gpu-bench: GEMM, collectives, and the
# fused blocks against bench/gpu/torch_gpu_blocks.py's PyTorch times, with
# --cpu-selftest only the blocks section on threads). Exit status: 0 if every check
# passed, 1 if one failed, 2 if there is no usable GPU.
#
# With $OUT set (the device tool), the log and the results are written
# there too: gpu-check.log, gpu-results.md, gpu-tests.xml, timeouts.xml.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODE=""
PREBUILT=""
BUILD_DIR="$ROOT/build-gpu/check"
SUITE=""
QUICK=0
BENCH=1
SELFTEST=0
JOBS=""

die() { echo "gpu-check: error: $*" >&2; exit 1; }
usage() { sed -n '2,37p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    --prebuilt) MODE=prebuilt; PREBUILT="${2:-}"; [ -n "$PREBUILT" ] || die "--prebuilt needs a directory"; shift 2 ;;
    --prebuilt=*) MODE=prebuilt; PREBUILT="${1#*=}"; shift ;;
    --build) MODE=build; shift ;;
    --build-dir) BUILD_DIR="${2:-}"; [ -n "$BUILD_DIR" ] || die "--build-dir needs a directory"; shift 2 ;;
    --build-dir=*) BUILD_DIR="${1#*=}"; shift ;;
    --suite) SUITE="${2:-}"; [ -n "$SUITE" ] || die "--suite needs a directory"; shift 2 ;;
    --suite=*) SUITE="${1#*=}"; shift ;;
    --quick) QUICK=1; shift ;;
    --no-bench) BENCH=0; shift ;;
    --cpu-selftest) SELFTEST=1; shift ;;
    --jobs) JOBS="${2:-}"; shift 2 ;;
    --jobs=*) JOBS="${1#*=}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[ -n "$JOBS" ] || JOBS=$(( $(nproc) < 8 ? $(nproc) : 8 ))
case "$JOBS" in ''|*[!0-9]*|0) die "--jobs must be a positive integer, got '$JOBS'" ;; esac
[ -n "$MODE" ] || die "say where the binaries come from: --prebuilt DIR or --build (see --help)"

# Everything printed also goes to $OUT/gpu-check.log. On exit, the scratch
# directory goes, and the log's tee is given time to write its last lines.
WORK=""
TEE_PID=""
cleanup() {
  [ -n "$WORK" ] && rm -rf "$WORK"
  if [ -n "$TEE_PID" ]; then
    exec 1>&- 2>&-
    wait "$TEE_PID" 2>/dev/null || true
  fi
}
trap cleanup EXIT
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT" || die "cannot create \$OUT=$OUT"
  exec > >(tee "$OUT/gpu-check.log") 2>&1
  TEE_PID=$!
fi
START=$(date +%s)
step() { echo; echo "=== gpu-check [$(($(date +%s) - START)) s] $*"; }

# ---- CUDA libraries of the machine ---------------------------------------------
# The binaries need libcudart, libcublas(Lt) and libnccl of CUDA 13. Where
# /usr/local/cuda has none, PyTorch's nvidia wheels do (site-packages/nvidia/
# */lib); their directories go on LD_LIBRARY_PATH, which the dynamic loader
# searches before the binaries' built-in paths.
NVIDIA_LIB_DIRS=()
find_nvidia_libs() {
  local nv
  nv=$(python3 -c 'import nvidia, os; print(list(nvidia.__path__)[0])' 2>/dev/null) || return 0
  [ -d "$nv" ] || return 0
  local lib
  while IFS= read -r lib; do
    NVIDIA_LIB_DIRS+=("$(dirname "$lib")")
  done < <(find "$nv" -maxdepth 4 \( -name 'libcudart.so.*' -o -name 'libcublas.so.*' \
             -o -name 'libcublasLt.so.*' -o -name 'libnccl.so.*' \) 2>/dev/null | sort -u)
  mapfile -t NVIDIA_LIB_DIRS < <(printf '%s\n' "${NVIDIA_LIB_DIRS[@]}" | sort -u)
  NVIDIA_ROOT="$nv"
}
NVIDIA_ROOT=""
if [ "$SELFTEST" = 0 ]; then
  find_nvidia_libs
fi
add_lib_path() { export LD_LIBRARY_PATH="$1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; }

# ---- The binaries -----------------------------------------------------------------
if [ "$MODE" = prebuilt ]; then
  [ -d "$PREBUILT" ] || die "--prebuilt $PREBUILT: no such directory (make it with scripts/make-gpu-suite.sh)"
  PREBUILT="$(cd "$PREBUILT" && pwd)"
  BIN="$PREBUILT/bin"
  # A copy may have lost the executable bits.
  chmod u+x "$BIN"/* 2>/dev/null || true
  for d in "${NVIDIA_LIB_DIRS[@]}"; do add_lib_path "$d"; done
  [ -d "$PREBUILT/lib" ] && add_lib_path "$PREBUILT/lib"
  [ -n "$SUITE" ] || SUITE="$PREBUILT/suite"
else
  step "building runtime/ in $BUILD_DIR (no LLVM)"
  command -v cmake >/dev/null || die "cmake not found"
  CMAKE_ARGS=(-DSHARDLIN_ENABLE_COMPILER=OFF -DCMAKE_BUILD_TYPE=Release
              -DCMAKE_CUDA_ARCHITECTURES=90)
  command -v mpicc >/dev/null || CMAKE_ARGS+=(-DSHARDLIN_ENABLE_MPI=OFF)
  command -v ninja >/dev/null && CMAKE_ARGS+=(-G Ninja)
  if [ ! -x /usr/local/cuda/bin/nvcc ]; then
    # CUDA from the Python environment: nvcc from PATH or the wheel, the
    # libraries from the wheels. The wheels ship only versioned libraries
    # (libcublas.so.13), so unversioned links for find_library go into the
    # build directory, and the wheels' headers onto the include path.
    [ -n "$NVIDIA_ROOT" ] || die "no /usr/local/cuda and no nvidia wheels in python3's environment"
    NVCC=$(command -v nvcc || find "$NVIDIA_ROOT" -name nvcc -type f 2>/dev/null | head -1)
    [ -n "$NVCC" ] || die "nvcc not found (PATH, /usr/local/cuda, nvidia wheels)"
    mkdir -p "$BUILD_DIR/cuda-links"
    for lib in cudart cublas cublasLt nccl; do
      f=$(find "$NVIDIA_ROOT" -maxdepth 4 -name "lib$lib.so.*" 2>/dev/null | sort | head -1)
      [ -n "$f" ] || die "lib$lib.so not found under $NVIDIA_ROOT"
      ln -sf "$f" "$BUILD_DIR/cuda-links/lib$lib.so"
    done
    INCLUDES=""
    for inc in $(find "$NVIDIA_ROOT" -maxdepth 3 -type d -name include 2>/dev/null); do
      INCLUDES+=" -isystem $inc"
    done
    NCCL_H=$(find "$NVIDIA_ROOT" -maxdepth 4 -name nccl.h 2>/dev/null | head -1)
    CMAKE_ARGS+=(-DCUDAToolkit_ROOT="$(dirname "$(dirname "$NVCC")")"
                 -DCMAKE_CUDA_COMPILER="$NVCC"
                 -DCMAKE_LIBRARY_PATH="$BUILD_DIR/cuda-links"
                 -DCMAKE_CXX_FLAGS="$INCLUDES" -DCMAKE_CUDA_FLAGS="$INCLUDES")
    [ -n "$NCCL_H" ] && CMAKE_ARGS+=(-DSHARDLIN_NCCL_INCLUDE_DIR="$(dirname "$NCCL_H")"
                                     -DSHARDLIN_NCCL_LIBRARY="$BUILD_DIR/cuda-links/libnccl.so")
  fi
  cmake -S "$ROOT" -B "$BUILD_DIR" "${CMAKE_ARGS[@]}" >"$BUILD_DIR.configure.log" 2>&1 || {
    tail -30 "$BUILD_DIR.configure.log"
    grep -qi "openblas" "$BUILD_DIR.configure.log" &&
      echo "gpu-check: OpenBLAS (its CMake package) is missing here; build on a machine that has it with scripts/make-gpu-suite.sh and run with --prebuilt"
    grep -qi "gtest" "$BUILD_DIR.configure.log" &&
      echo "gpu-check: GoogleTest is missing here; build with scripts/make-gpu-suite.sh elsewhere and run with --prebuilt"
    die "configuring runtime/ failed (log: $BUILD_DIR.configure.log)"
  }
  grep -q "GPU backends enabled" "$BUILD_DIR.configure.log" ||
    die "CMake did not find the CUDA toolkit; the GPU backends would not be built (log: $BUILD_DIR.configure.log)"
  cmake --build "$BUILD_DIR" -j "$(nproc)" --target shardlin-exec shardlin-gpu-tests shardlin-gpu-bench ||
    die "building runtime/ failed"
  BIN="$BUILD_DIR/bin"
  for d in "${NVIDIA_LIB_DIRS[@]}"; do add_lib_path "$d"; done
  [ -n "$SUITE" ] || SUITE="$ROOT/build-gpu/pkg/suite"
fi
for exe in shardlin-exec shardlin-gpu-tests shardlin-gpu-bench; do
  [ -x "$BIN/$exe" ] || die "$BIN/$exe is missing"
done
NPYTOOL="$ROOT/testing/tools/npytool.py"

# ---- Does it load, and is there a GPU? --------------------------------------------
step "environment"
VERSION=$("$BIN/shardlin-exec" --version 2>&1)
if [ $? -ne 0 ] && [ "$MODE" = prebuilt ] && [ -d "$PREBUILT/lib-fallback" ]; then
  # Built against a newer libstdc++ than this machine's: use the carried one.
  add_lib_path "$PREBUILT/lib-fallback"
  VERSION=$("$BIN/shardlin-exec" --version 2>&1)
fi
echo "$VERSION"
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
if ! echo "$VERSION" | grep -q "^shardlin-exec "; then
  echo "gpu-check: error: $BIN/shardlin-exec does not run here:"
  ldd "$BIN/shardlin-exec" 2>&1 | grep -i "not found" || true
  exit 1
fi
# --version loads no GPU library; --gpus loads the GPU module and asks CUDA.
GPU_LINE=$("$BIN/shardlin-exec" --gpus 2>&1 | sed -n 's/^ *gpu: //p')
NGPUS=$(echo "$GPU_LINE" | sed -n 's/^\([0-9][0-9]*\) devices\{0,1\}:.*/\1/p')
NGPUS=${NGPUS:-0}
if [ "$SELFTEST" = 0 ] && [ "$NGPUS" -lt 1 ]; then
  echo "gpu-check: no GPU: $GPU_LINE"
  exit 2
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
python3 --version

FAILED=()
SUMMARY=()
note() { SUMMARY+=("$1"); }

# gtest_step LABEL FILTER SECONDS XMLNAME DROP: runs shardlin-gpu-tests with
# --gtest_filter=FILTER for at most SECONDS, writes its XML report to
# $OUT/XMLNAME.xml when $OUT is set, hides the log lines matching the regex
# DROP (failures keep their details), and notes PASS or FAIL under LABEL.
gtest_step() {
  local label=$1 filter=$2 seconds=$3 xmlname=$4 drop=$5 xml=() t0 rc
  [ -n "${OUT:-}" ] && xml=(--gtest_output="xml:$OUT/$xmlname.xml")
  t0=$(date +%s)
  timeout "$seconds" "$BIN/shardlin-gpu-tests" --gtest_filter="$filter" "${xml[@]}" 2>&1 |
    grep -v -E "$drop"
  rc=${PIPESTATUS[0]}
  if [ "$rc" = 0 ]; then note "PASS  $label ($(($(date +%s) - t0)) s)"
  elif [ "$rc" = 124 ]; then note "FAIL  $label HUNG (killed after $seconds s)"; FAILED+=("$label")
  else note "FAIL  $label (exit $rc)"; FAILED+=("$label"); fi
}

# ---- (1) GPU unit tests ----------------------------------------------------------
TIMEOUT_FILTER='*TimesOut*'
if [ "$SELFTEST" = 0 ]; then
  step "(1) GPU unit tests: shardlin-gpu-tests (timeout tests in step 3)"
  gtest_step "GPU unit tests" "-$TIMEOUT_FILTER" 600 gpu-tests '^\[ +(RUN|OK) +\]'
fi

# ---- (2) end-to-end suite through shardlin-exec --------------------------------
# run_case BACKEND NAME W DTYPE BIAS: one configuration through shardlin-exec
# and npytool.py check; writes "PASS" or "FAIL <why>" to its result file.
run_case() {
  local backend=$1 name=$2 w=$3 dt=$4 bias=$5
  local dir="$SUITE/$name" outdir="$WORK/$backend$RUN_TAG/$name" args=() boundflag=() a
  mkdir -p "$outdir"
  if [ "$bias" = grad ]; then run_grad_case "$@"; return; fi
  if [ "$bias" = args ]; then
    # A block (shardlin-write-block-suite) or a partial-sums case: its
    # arguments listed in DIR/args, its error bound in DIR/bound.
    while read -r a; do args+=(--arg="$dir/$a"); done <"$dir/args"
    [ -f "$dir/bound" ] && boundflag=(--bound "$(cat "$dir/bound")")
  else
    args=(--arg="$dir/x.{rank}.npy" --arg="$dir/w.npy")
    [ "$bias" = 1 ] && args+=(--arg="$dir/b.npy")
  fi
  local be=$backend
  [ "$SELFTEST" = 1 ] && be=threads
  if ! timeout 300 "$BIN/shardlin-exec" "$dir/program.prog" --world-size="$w" --backend="$be" \
       --timeout=60 "${args[@]}" --out="$outdir/y.{rank}.npy" $EXEC_FLAGS >"$outdir/log" 2>&1; then
    echo "FAIL $(tail -1 "$outdir/log")" >"$outdir/result"; return
  fi
  # A case with a check.sh of its own checks with it; the others with
  # npytool.py against ref/scale and the bound.
  local checker=(python3 "$NPYTOOL" check --dir "$dir" --out "$outdir/y.{rank}.npy"
                 --world-size "$w" --dtype "$dt" "${boundflag[@]}")
  [ -f "$dir/check.sh" ] && checker=(sh "$dir/check.sh" "$outdir/y.{rank}.npy")
  if ! "${checker[@]}" >"$outdir/check" 2>&1; then
    echo "FAIL $(tail -1 "$outdir/check")" >"$outdir/result"; return
  fi
  echo PASS >"$outdir/result"
}

# run_grad_case BACKEND NAME W DTYPE grad: a gradient case
# (shardlin-write-grad-suite): the saving forward if it has one, then the
# backward with the saved values, then every gradient gI against gI/ref and
# the case's bound; a case with an "outs" file (the attention's backward)
# names its outputs there and checks them with its check.sh.
run_grad_case() {
  local backend=$1 name=$2 w=$3 dt=$4
  local dir="$SUITE/$name" outdir="$WORK/$backend/$name" args=() outs=() a i n
  local be=$backend
  [ "$SELFTEST" = 1 ] && be=threads
  while read -r a; do args+=(--arg="$dir/$a"); done <"$dir/args"
  if [ -f "$dir/saving.prog" ]; then
    n=$(cat "$dir/saved")
    outs=(--out="$outdir/y.{rank}.npy")
    for ((i = 0; i < n; i++)); do outs+=(--out="$outdir/s$i.{rank}.npy"); done
    # The saving forward takes @main's arguments: all but dy, the last.
    if ! timeout 300 "$BIN/shardlin-exec" "$dir/saving.prog" --world-size="$w" --backend="$be" \
         --timeout=60 "${args[@]:0:${#args[@]}-1}" "${outs[@]}" >"$outdir/log" 2>&1; then
      echo "FAIL the saving forward: $(tail -1 "$outdir/log")" >"$outdir/result"; return
    fi
    for ((i = 0; i < n; i++)); do args+=(--arg="$outdir/s$i.{rank}.npy"); done
  fi
  outs=()
  if [ -f "$dir/outs" ]; then
    # The outputs by name (the attention's backward), checked by its check.sh.
    while read -r a; do outs+=(--out="$outdir/$a"); done <"$dir/outs"
    n=0
  else
    n=$(find "$dir" -mindepth 1 -maxdepth 1 -type d -name 'g[0-9]*' | wc -l)
    for ((i = 0; i < n; i++)); do outs+=(--out="$outdir/g$i.{rank}.npy"); done
  fi
  if ! timeout 300 "$BIN/shardlin-exec" "$dir/backward.prog" --world-size="$w" --backend="$be" \
       --timeout=60 "${args[@]}" "${outs[@]}" >"$outdir/log" 2>&1; then
    echo "FAIL the backward: $(tail -1 "$outdir/log")" >"$outdir/result"; return
  fi
  if [ -f "$dir/check.sh" ] && ! sh "$dir/check.sh" "$outdir" >"$outdir/check" 2>&1; then
    echo "FAIL $(tail -1 "$outdir/check")" >"$outdir/result"; return
  fi
  for ((i = 0; i < n; i++)); do
    if ! python3 "$NPYTOOL" check --dir "$dir/g$i" --out "$outdir/g$i.{rank}.npy" \
         --world-size "$w" --dtype "$dt" --bound "$(cat "$dir/bound")" >"$outdir/check" 2>&1; then
      echo "FAIL gradient $i: $(tail -1 "$outdir/check")" >"$outdir/result"; return
    fi
  done
  echo PASS >"$outdir/result"
}

# RUN_TAG (a suffix of the outputs' directory and the label) and EXEC_FLAGS
# (more shardlin-exec flags) say which pass of the suite this is; ONLY
# ("block_" or empty) keeps the cases whose names start with it.
RUN_TAG="" EXEC_FLAGS="" ONLY=""
run_suite() { # run_suite BACKEND MAXW: every configuration, JOBS at a time
  local backend=$1 maxw=$2 skipped=0 name w dt bias t0 kind result
  local -A pass=([linear]=0 [block]=0 [grad]=0) fail=([linear]=0 [block]=0 [grad]=0)
  t0=$(date +%s)
  local names=() pids=() running p
  while read -r name w dt bias; do
    [ -n "$name" ] || continue
    case "$name" in "$ONLY"*) ;; *) continue ;; esac
    if [ "$w" -gt "$maxw" ]; then skipped=$((skipped + 1)); continue; fi
    names+=("$name")
    run_case "$backend" "$name" "$w" "$dt" "$bias" &
    pids+=($!)
    # At most JOBS at once. The cases' own PIDs are polled: a bare `wait`
    # or `wait -n` would also wait for the log's tee (a process
    # substitution, with $OUT set), which ends only with this script.
    while :; do
      running=0
      for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && running=$((running + 1)); done
      [ "$running" -lt "$JOBS" ] && break
      sleep 0.05
    done
  done <"$SUITE/cases.txt"
  wait "${pids[@]}" 2>/dev/null
  for name in "${names[@]}"; do
    kind=linear
    case "$name" in block_*) kind=block ;; grad_*) kind=grad ;; esac
    result=$(cat "$WORK/$backend$RUN_TAG/$name/result" 2>/dev/null || echo "FAIL no result")
    if [ "$result" = PASS ]; then pass[$kind]=$((pass[$kind] + 1))
    else fail[$kind]=$((fail[$kind] + 1)); echo "FAIL $backend $name: ${result#FAIL }"; fi
  done
  local label=$backend$RUN_TAG
  [ "$SELFTEST" = 1 ] && label="$backend$RUN_TAG (run on threads: --cpu-selftest)"
  echo "$label: linear layers $((pass[linear])) passed, $((fail[linear])) failed; blocks $((pass[block])) passed, $((fail[block])) failed; gradients $((pass[grad])) passed, $((fail[grad])) failed; $skipped skipped (W > $maxw); $(($(date +%s) - t0)) s, $JOBS at a time"
  local total_fail=$((fail[linear] + fail[block] + fail[grad])) total_pass=$((pass[linear] + pass[block] + pass[grad]))
  if [ "$total_fail" = 0 ] && [ "$total_pass" -gt 0 ]; then
    note "PASS  e2e $label: $((pass[linear])) linear layers + $((pass[block])) blocks + $((pass[grad])) gradient cases (W <= $maxw)$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"
  else
    note "FAIL  e2e $label: $total_fail of $((total_pass + total_fail)) failed"; FAILED+=("e2e $backend")
  fi
}

if [ -f "$SUITE/cases.txt" ]; then
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
  step "(2) end-to-end suite ($(wc -l <"$SUITE/cases.txt") configurations in $SUITE)"
  run_suite cuda-local 8
  # The blocks again, each fused one pipelined in 3 row chunks (its
  # collectives on a second stream beside the GEMMs): the same checks.
  RUN_TAG="-overlap3" EXEC_FLAGS="--overlap-chunks=3" ONLY="block_" run_suite cuda-local 8
  if echo "$VERSION" | grep -q "backends:.*nccl"; then
    if [ "$SELFTEST" = 1 ]; then run_suite nccl 8; else run_suite nccl "$NGPUS"; fi
  else
    note "SKIP  e2e nccl: this build has no NCCL"
  fi
else
  note "FAIL  e2e: no suite at $SUITE (make it with scripts/make-gpu-suite.sh)"
  FAILED+=("e2e suite missing")
fi

# ---- (3) timeouts -----------------------------------------------------------------
if [ "$SELFTEST" = 0 ]; then
  step "(3) timeout tests: a rank that never joins fails every other within the timeout"
  gtest_step "timeout tests" "$TIMEOUT_FILTER" 180 timeouts '^\[ +RUN +\]'
fi

# ---- (4) timings ------------------------------------------------------------------
# The blocks section's programs sit next to the suite (make-gpu-suite.sh).
BLOCKS_DIR="$(dirname "$SUITE")/bench-blocks"
BENCH_OUT=""
if [ "$SELFTEST" = 0 ] && [ "$BENCH" = 1 ]; then
  step "(4) timings: shardlin-gpu-bench"
  BENCH_ARGS=(--bias-experiments)
  [ "$QUICK" = 1 ] && BENCH_ARGS=(--bias-experiments --gemm-size=4096 --gemm-reps=10 --coll-sizes=64K,64M --coll-reps=10)
  BENCH_OUT=$(timeout 300 "$BIN/shardlin-gpu-bench" "${BENCH_ARGS[@]}" 2>&1)
  RC=$?
  echo "$BENCH_OUT"
  if [ "$RC" = 0 ]; then note "PASS  timings"
  else note "FAIL  timings (exit $RC)"; FAILED+=("timings"); fi
  if [ -f "$BLOCKS_DIR/blocks.txt" ]; then
    # PyTorch on the same GPU first (optional: without it the column is "-").
    step "(4c) blocks: PyTorch (bench/gpu/torch_gpu_blocks.py), then shardlin"
    [ -n "$WORK" ] || WORK=$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")
    TORCH_FILE="$WORK/torch-blocks.txt"
    TORCH_ARGS=()
    [ "$QUICK" = 1 ] && TORCH_ARGS=(--reps 10)
    timeout 300 "${TORCH_PYTHON:-python3}" "$ROOT/bench/gpu/torch_gpu_blocks.py" \
      "$BLOCKS_DIR" "${TORCH_ARGS[@]}" >"$TORCH_FILE" 2>&1 ||
      echo "gpu-check: the PyTorch baseline failed or timed out (exit $?); the blocks run without it"
    cat "$TORCH_FILE"
    BLOCKS_OUT=$(timeout 300 "$BIN/shardlin-gpu-bench" --no-gemm --no-collectives \
      --blocks="$BLOCKS_DIR" --torch-blocks="$TORCH_FILE" \
      $([ "$QUICK" = 1 ] && echo --blocks-reps=10) 2>&1)
    RC=$?
    echo "$BLOCKS_OUT"
    BENCH_OUT="$BENCH_OUT
$(grep -v '^result ' "$TORCH_FILE")
$BLOCKS_OUT"
    if [ "$RC" = 0 ]; then note "PASS  blocks timings (outputs checked)"
    else note "FAIL  blocks timings (exit $RC)"; FAILED+=("blocks timings"); fi
  else
    note "SKIP  blocks timings: no $BLOCKS_DIR/blocks.txt (scripts/make-gpu-suite.sh writes it)"
  fi
elif [ "$SELFTEST" = 1 ] && [ "$BENCH" = 1 ] &&
     [ -f "$(dirname "$SUITE")/bench-blocks-tiny/blocks.txt" ]; then
  # The blocks section's logic on threads, with the tiny programs.
  step "(4c) blocks section on threads (--cpu-selftest)"
  BENCH_OUT=$(timeout 300 "$BIN/shardlin-gpu-bench" --no-gemm --no-collectives \
    --blocks="$(dirname "$SUITE")/bench-blocks-tiny" --blocks-backend=threads \
    --blocks-reps=3 2>&1)
  RC=$?
  echo "$BENCH_OUT"
  if [ "$RC" = 0 ]; then note "PASS  blocks section on threads"
  else note "FAIL  blocks section on threads (exit $RC)"; FAILED+=("blocks self-test"); fi
fi

# ---- Results ----------------------------------------------------------------------
step "results"
RESULTS_FILE=/dev/null
[ -n "${OUT:-}" ] && RESULTS_FILE="$OUT/gpu-results.md"
{
  echo "# gpu-check results"
  echo
  echo "- commit: $(cat "${PREBUILT:-/nonexistent}/COMMIT" 2>/dev/null || git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- gpu: $GPU_LINE"
  echo "- mode: $MODE$([ "$SELFTEST" = 1 ] && echo ', --cpu-selftest (no GPU used)')"
  echo
  echo '```'
  printf '%s\n' "${SUMMARY[@]}"
  echo '```'
  if [ -n "$BENCH_OUT" ]; then
    echo
    echo '```'
    echo "$BENCH_OUT"
    echo '```'
  fi
} | tee "$RESULTS_FILE"
if [ ${#FAILED[@]} -gt 0 ]; then
  echo "gpu-check: FAILED: ${FAILED[*]}"
  exit 1
fi
echo "gpu-check: all checks passed ($(($(date +%s) - START)) s)"
exit 0
