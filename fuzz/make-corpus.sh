#!/usr/bin/env bash
# Regenerates the seed corpora of the fuzz targets (fuzz/corpus/<target>/)
# from the test suite. Crash reproducers added by hand (named crash-*) are
# kept. Needs a built shardlin-run (BUILD_DIR, default build/).
#
#   mlir:    every lit test file (test/**/*.mlir), split at `// -----`,
#            and the examples;
#   npy:     arrays written by testing/tools/npytool.py (every dtype, 1-D to 3-D,
#            empty), plus a few headers that are almost right;
#   safetensors: files written by the format's rules (every dtype, two
#            tensors, metadata, empty) and headers that are almost right;
#   program: `shardlin-run --emit-program` of every runnable test input;
#   import:  the upstream-form modules of the import's tests
#            (test/Dialect/Shardlin/import-*.mlir, split at `// -----`, and
#            test/Dialect/Shardlin/Inputs/upstream/*.mlir).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build}"
C="$ROOT/fuzz/corpus"
mkdir -p "$C/mlir" "$C/npy" "$C/safetensors" "$C/program" "$C/import"
find "$C" -type f ! -name 'crash-*' -delete

# mlir: one file per `// -----` section.
python3 - "$ROOT" "$C/mlir" <<'PY'
import hashlib, pathlib, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
files = sorted(root.glob("test/**/*.mlir")) + sorted(root.glob("examples/**/*.mlir"))
seen = set()
for f in files:
    parts = f.read_text().split("// -----")
    # invalid.mlir has one section per verifier rule: a sample of them is
    # enough to seed the verifiers, and keeps the corpus small.
    if len(parts) > 12:
        parts = parts[::4]
    for part in parts:
        # Drop RUN/CHECK lines: they are comments to the parser and only
        # dilute the corpus.
        lines = [l for l in part.splitlines()
                 if not l.lstrip().startswith("// RUN") and
                 "CHECK" not in l]
        text = "\n".join(lines).strip() + "\n"
        if len(text) < 20:
            continue
        h = hashlib.sha1(text.encode()).hexdigest()[:12]
        if h in seen:
            continue
        seen.add(h)
        (out / f"{f.stem}-{h}.mlir").write_text(text)
PY

# import: one file per `// -----` section that holds a shard.grid.
python3 - "$ROOT" "$C/import" <<'PY'
import hashlib, pathlib, sys
root, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
tests = root / "test/Dialect/Shardlin"
files = sorted(tests.glob("import-*.mlir")) + sorted(tests.glob("Inputs/upstream/*.mlir"))
for f in files:
    for part in f.read_text().split("// -----"):
        lines = [l for l in part.splitlines()
                 if not l.lstrip().startswith("// RUN") and "CHECK" not in l
                 and "expected-" not in l]
        text = "\n".join(lines).strip() + "\n"
        if "shard.grid" not in text:
            continue
        h = hashlib.sha1(text.encode()).hexdigest()[:12]
        (out / f"{f.stem}-{h}.mlir").write_text(text)
PY

# npy
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
i=0
for spec in "f32 5 --bias" "f64 2x3" "f16 '' --bias" "bf16 3 --bias" "f32 0"; do
  eval "set -- $spec"
  python3 "$ROOT/testing/tools/npytool.py" gen-linear --n 3 --k 4 --batch-shape "$2" \
    --world-size 2 --dtype "$1" ${3:-} --seed $i --out-dir "$T/$i" >/dev/null
  for f in "$T/$i"/x.0.npy "$T/$i"/w.npy "$T/$i"/b.npy; do
    [ -f "$f" ] && cp "$f" "$C/npy/$1-$i-$(basename "$f")"
  done
  i=$((i + 1))
done
python3 - "$C/npy" <<'PY'
import struct, sys, pathlib
out = pathlib.Path(sys.argv[1])
def npy(header, data=b"", major=1):
    h = header.encode()
    if major == 1:
        pre = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h))
    else:
        pre = b"\x93NUMPY" + bytes([major, 0]) + struct.pack("<I", len(h))
    return pre + h + data
seeds = {
    "v2-f4.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n", b"\0" * 8, 2),
    "v3-f8.npy": npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }\n", b"\0" * 8, 3),
    "huge-shape.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,), }\n"),
    "overflow-dims.npy": npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }\n"),
    "negative-dim.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }\n"),
    "fortran.npy": npy("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }\n", b"\0" * 4),
    "big-endian.npy": npy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n", b"\0" * 4),
    "quotes.npy": npy('{"descr": "<u2", "fortran_order": False, "shape": (1, 0), }\n'),
    # bf16 as ml_dtypes saves it, and as plain NumPy saves such an array again.
    "ml-dtypes-bf16.npy": npy("{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }\n", b"\xc0\x3f\x10\xc0"),
    "numpy-void-bf16.npy": npy("{'descr': '|V2', 'fortran_order': False, 'shape': (1,), }\n", b"\x80\x40"),
    "header-len-huge.npy": b"\x93NUMPY\x02\x00\xff\xff\xff\xff{}",
}
for name, data in seeds.items():
    (out / name).write_bytes(data)
PY

# safetensors
python3 - "$C/safetensors" <<'PY'
import json, pathlib, struct, sys
out = pathlib.Path(sys.argv[1])
def st(header, data=b"", raw=None):
    text = raw if raw is not None else json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data
def t(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}
seeds = {
    "two.safetensors": st({"__metadata__": {"format": "pt"}, "b": t("F32", [2], 12, 20),
                           "w": t("BF16", [2, 3], 0, 12)}, bytes(range(20))),
    "f16.safetensors": st({"x": t("F16", [3], 0, 6)}, b"\0\x3c" * 3),
    "f64.safetensors": st({"x": t("F64", [], 0, 8)}, b"\0" * 8),
    "empty.safetensors": st({"e": t("F32", [0, 4], 0, 0)}),
    "no-tensors.safetensors": st({}),
    "i32.safetensors": st({"x": t("I32", [1], 0, 4)}, b"\0" * 4),
    "overlap.safetensors": st({"a": t("F32", [2], 0, 8), "b": t("F32", [2], 4, 12)}, b"\0" * 12),
    "gap.safetensors": st({"a": t("F32", [1], 0, 4), "b": t("F32", [1], 8, 12)}, b"\0" * 12),
    "past-end.safetensors": st({"a": t("F32", [4], 0, 16)}, b"\0" * 8),
    "huge-shape.safetensors": st({"a": t("F32", [4294967296, 4294967296, 2], 0, 8)}, b"\0" * 8),
    "negative-dim.safetensors": st(None, b"", b'{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}'),
    "duplicate.safetensors": st(None, b"\0" * 4, b'{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'),
    "header-len-huge.safetensors": b"\xff" * 8 + b"{}",
}
for name, data in seeds.items():
    (out / name).write_bytes(data)
PY

# program
for f in "$ROOT"/test/shardlin-run/Inputs/*.mlir "$ROOT"/examples/quickstart/linear.mlir; do
  base="$(basename "$f" .mlir)"
  for s in activations gather-weight; do
    "$BUILD_DIR/bin/shardlin-run" "$f" --strategy=$s \
      --emit-program="$C/program/$base-$s.prog" 2>/dev/null || true
  done
done
# Programs whose entry must be chosen.
"$BUILD_DIR/bin/shardlin-run" "$ROOT/test/shardlin-run/Inputs/two-public.mlir" --entry=a \
  --emit-program="$C/program/two-public-a.prog" 2>/dev/null || true
# Imported upstream modules (chunk bounds, all_reduce, from_local) and the
# rank-local upstream ops (transpose, fill, gemm from linalg.matmul).
for e in col_uneven row_uneven; do
  "$BUILD_DIR/bin/shardlin-run" "$ROOT/test/shardlin-run/Inputs/upstream-linears.mlir" \
    --entry=$e --strategy=activations \
    --emit-program="$C/program/upstream-$e.prog" 2>/dev/null || true
done
# Replicated arguments (`arg N plain replicated loc ...`), one with a
# dynamic row count.
for e in col_replicated col_replicated_rows; do
  "$BUILD_DIR/bin/shardlin-run" "$ROOT/test/shardlin-run/Inputs/upstream-replicated.mlir" \
    --entry=$e --strategy=activations \
    --emit-program="$C/program/upstream-$e.prog" 2>/dev/null || true
done
for e in linear local_f64 constants; do
  "$BUILD_DIR/bin/shardlin-run" "$ROOT/test/shardlin-run/Inputs/rank-local-ops.mlir" \
    --entry=$e --world-size=3 \
    --emit-program="$C/program/rank-local-ops-$e.prog" 2>/dev/null || true
done
find "$C" -type f -empty -delete
for t in mlir npy safetensors program; do
  echo "$t: $(ls "$C/$t" | wc -l) files, $(du -sk "$C/$t" | cut -f1) KiB"
done
