#!/usr/bin/env bash
# Creates (once) and prints the path of the frontend venv: PyTorch and the
# torch-mlir FX exporter at the versions pinned in
# integration_test/frontends/requirements.txt (about 5.7 GB, about 11 minutes
# the first time). The venv lives outside the clone, keyed by the pins' hash:
#   ${SHARDLIN_VENV_CACHE:-$HOME/.cache/shardlin}/frontend-<hash>
# so every clone on a machine shares it and a change of pins makes a new one.
#
#   bash scripts/frontend-venv.sh          prints the venv's directory
#   "$(bash scripts/frontend-venv.sh)/bin/python" script.py
#
# Progress goes to stderr; the last line on stdout is the path. The venv is
# built in a temporary directory and renamed into place only when complete,
# so an interrupted install is never mistaken for a finished one.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQ="$ROOT/integration_test/frontends/requirements.txt"
CACHE="${SHARDLIN_VENV_CACHE:-$HOME/.cache/shardlin}"
KEY="$(sha256sum "$REQ" | cut -c1-16)"
VENV="$CACHE/frontend-$KEY"
if [ -x "$VENV/bin/python" ] && [ -f "$VENV/.complete" ]; then
  echo "$VENV"
  exit 0
fi
mkdir -p "$CACHE"
PY="${SHARDLIN_VENV_PYTHON:-python3}"
# Debian's python3 makes venvs only with python3-venv, and the Python
# package's extension (docs/python.md) needs its headers, python3-dev:
# installed here as scripts/bootstrap.sh installs the rest.
has_headers() {
  "$PY" -c 'import os, sysconfig; assert os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' 2>/dev/null
}
if ! "$PY" -c 'import venv, ensurepip' 2>/dev/null || ! has_headers; then
  if [ "$(command -v "$PY")" = /usr/bin/python3 ] && command -v apt-get >/dev/null; then
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then
      command -v sudo >/dev/null || {
        echo "frontend-venv: need root (or sudo) to install python3-venv python3-dev" >&2; exit 1; }
      SUDO="sudo"
    fi
    echo "frontend-venv: installing python3-venv python3-dev" >&2
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q >&2
    $SUDO apt-get install -y -q --no-install-recommends python3-venv python3-dev >&2
  fi
fi
if ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "frontend-venv: $PY cannot create a venv; install python3-venv" >&2
  exit 1
fi
TMP="$(mktemp -d "$CACHE/frontend-$KEY.tmp.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
echo "frontend-venv: installing the pinned frontend toolchain into $VENV (once per machine)" >&2
"$PY" -m venv "$TMP" >&2
"$TMP/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$REQ" >&2
"$TMP/bin/python" -c 'import torch, torch_mlir.fx, numpy, ml_dtypes, safetensors, jax, iree.compiler' >&2
rm -rf "$VENV"
# A venv's scripts name its directory; make them name the final one.
grep -rlF "$TMP" "$TMP/bin" | xargs -r sed -i "s#$TMP#$VENV#g"
sed -i "s#$TMP#$VENV#g" "$TMP/pyvenv.cfg"
mv "$TMP" "$VENV"
trap - EXIT
touch "$VENV/.complete"
echo "$VENV"
