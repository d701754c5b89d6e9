#!/usr/bin/env bash
# Creates bench/.venv (git-ignored) with PyTorch 2.x from pip's configured
# package index (no index named here), for the
# PyTorch comparisons of shardlin-bench (bench/torch_linear.py,
# bench/torch_blocks.py; also bench/dtensor_attention.py). Called by bench/run.sh; safe to rerun (an existing
# venv whose torch imports is kept). Prints the venv's python on success.
#
#   bash bench/torch-venv.sh          # bench/.venv
#   VENV=/path bash bench/torch-venv.sh
#
# The default index's Linux wheel of torch is the CUDA build: pip also pulls
# the nvidia-* packages (several GB); only its CPU side is used here.
# TORCH_VENV_TIMEOUT (seconds, default 900) bounds the install.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VENV:-$ROOT/bench/.venv}"
TIMEOUT="${TORCH_VENV_TIMEOUT:-900}"

if [ -x "$VENV/bin/python" ] &&
   "$VENV/bin/python" -c 'import torch, torch.distributed.tensor' 2>/dev/null; then
  echo "$VENV/bin/python"
  exit 0
fi
python3 -m venv "$VENV" >&2
t0=$(date +%s)
echo "torch-venv: pip install 'torch>=2.3' into $VENV (up to ${TIMEOUT} s)" >&2
if ! timeout "$TIMEOUT" "$VENV/bin/python" -m pip install -q --disable-pip-version-check \
     'torch>=2.3' numpy >&2; then
  echo "torch-venv: pip install failed or timed out after $(( $(date +%s) - t0 )) s" >&2
  exit 1
fi
echo "torch-venv: installed in $(( $(date +%s) - t0 )) s ($(du -sh "$VENV" | cut -f1))" >&2
"$VENV/bin/python" -c 'import torch, torch.distributed.tensor; print("torch-venv: torch", torch.__version__)' >&2
echo "$VENV/bin/python"
