// A bf16 MLP block run from a safetensors checkpoint (written in the test
// by the format's own rules: npytool.py safetensors, struct + json) on 4
// threads: each rank reads only its chunk of each weight (the bytes each
// rank read, from --verbose: its 2 x 64 x 2-byte x, 256 of the 1024 rows of
// the up projection, 256 of the 1024 columns of the down projection, 65792
// of the checkpoint's 262144 weight bytes), both results go into one
// safetensors file per rank, and every element of both is checked against
// the float64 reference. shardlin-exec runs the same program from the same
// checkpoint. Then each error of a bad reference or a bad checkpoint.

// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-mlp --k 64 --hidden 1024 --n 64 --rows 2 --world-size 4 --dtype bf16 --seed 27 --out-dir %t
// RUN: %python %shardlin_src/testing/tools/npytool.py safetensors --out %t/model.safetensors model.layers.0.mlp.up_proj.weight=%t/w1.npy model.layers.0.mlp.down_proj.weight=%t/w2.npy

// RUN: shardlin-run %S/Inputs/bf16-mlp.mlir --verbose --strategy=activations --arg=%t/x.{rank}.npy --arg=%t/model.safetensors:model.layers.0.mlp.up_proj.weight --arg=%t/model.safetensors:model.layers.0.mlp.down_proj.weight --out='%t/y.{rank}.safetensors:y' --out='%t/y.{rank}.safetensors:h' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BYTES
// BYTES-DAG: rank 0: {{.*}}; read 65792 bytes of input files
// BYTES-DAG: rank 1: {{.*}}; read 65792 bytes of input files
// BYTES-DAG: rank 2: {{.*}}; read 65792 bytes of input files
// BYTES-DAG: rank 3: {{.*}}; read 65792 bytes of input files
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/y.{rank}.safetensors:y' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/h --out '%t/y.{rank}.safetensors:h' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK
// OK: ok: 4 ranks
// RUN: %python %shardlin_src/testing/tools/npytool.py show '%t/y.0.safetensors:h' | FileCheck %s --check-prefix=SHOW
// SHOW: <V2 (2, 1024)

// {rank} in a safetensors path: each rank's x from a file of its own; the
// same results, byte for byte.
// RUN: %python %shardlin_src/testing/tools/npytool.py safetensors --out %t/x.0.safetensors x=%t/x.0.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py safetensors --out %t/x.1.safetensors x=%t/x.1.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py safetensors --out %t/x.2.safetensors x=%t/x.2.npy
// RUN: %python %shardlin_src/testing/tools/npytool.py safetensors --out %t/x.3.safetensors x=%t/x.3.npy
// RUN: shardlin-run %S/Inputs/bf16-mlp.mlir --strategy=activations --arg='%t/x.{rank}.safetensors:x' --arg=%t/model.safetensors:model.layers.0.mlp.up_proj.weight --arg=%t/model.safetensors:model.layers.0.mlp.down_proj.weight --out='%t/r.{rank}.safetensors:y' --out='%t/r.{rank}.safetensors:h'
// RUN: cmp %t/r.0.safetensors %t/y.0.safetensors
// RUN: cmp %t/r.3.safetensors %t/y.3.safetensors

// The gather-weight strategy, and shardlin-exec on the emitted program.
// RUN: shardlin-run %S/Inputs/bf16-mlp.mlir --strategy=gather-weight --arg=%t/x.{rank}.npy --arg=%t/model.safetensors:model.layers.0.mlp.up_proj.weight --arg=%t/model.safetensors:model.layers.0.mlp.down_proj.weight --out='%t/g.{rank}.safetensors:y' --out='%t/g.{rank}.safetensors:h'
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/g.{rank}.safetensors:y' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK
// RUN: shardlin-run %S/Inputs/bf16-mlp.mlir --strategy=gather-weight --emit-program=%t/mlp.prog
// RUN: shardlin-exec %t/mlp.prog --verbose --arg=%t/x.{rank}.npy --arg=%t/model.safetensors:model.layers.0.mlp.up_proj.weight --arg=%t/model.safetensors:model.layers.0.mlp.down_proj.weight --out='%t/e.{rank}.safetensors:y' --out='%t/e.{rank}.npy' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BYTES
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/e.{rank}.safetensors:y' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/h --out '%t/e.{rank}.npy' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK

// A name the checkpoint does not hold.
// RUN: not shardlin-run %S/Inputs/bf16-mlp.mlir --arg=%t/x.{rank}.npy --arg=%t/model.safetensors:model.layers.0.mlp.gate_proj.weight --arg=%t/model.safetensors:model.layers.0.mlp.down_proj.weight --out='%t/out/y.{rank}.safetensors:y' --out='%t/out/h.{rank}.npy' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NAME
// NAME: error: rank {{[0-9]}}: argument 1: '{{.*}}model.safetensors' has no tensor 'model.layers.0.mlp.gate_proj.weight' (it holds 'model.layers.0.mlp.down_proj.weight', 'model.layers.0.mlp.up_proj.weight')

// A checkpoint named without the tensor (its .npy reader said "bad magic:
// not a .npy file"): the message asks for :NAME and lists the tensors; a
// sharded argument's and a plain one's. An output named so would have been
// written as a .npy file: refused before the run.
// RUN: not shardlin-run %S/Inputs/bf16-mlp.mlir --arg=%t/x.{rank}.npy --arg=%t/model.safetensors --arg=%t/model.safetensors:model.layers.0.mlp.down_proj.weight --out='%t/out/y.{rank}.safetensors:y' --out='%t/out/h.{rank}.npy' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-NAME
// NO-NAME: error: rank {{[0-9]}}: argument 1: '{{.*}}model.safetensors' is a safetensors file: name the tensor to read, as '{{.*}}model.safetensors:NAME' (it holds 'model.layers.0.mlp.down_proj.weight', 'model.layers.0.mlp.up_proj.weight')
// RUN: not shardlin-run %S/Inputs/bf16-mlp.mlir --arg=%t/x.{rank}.safetensors --arg=%t/model.safetensors:model.layers.0.mlp.up_proj.weight --arg=%t/model.safetensors:model.layers.0.mlp.down_proj.weight --out='%t/out/y.{rank}.safetensors:y' --out='%t/out/h.{rank}.npy' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-NAME-X
// NO-NAME-X: error: rank {{[0-9]}}: argument 0: '{{.*}}x.{{[0-3]}}.safetensors' is a safetensors file: name the tensor to read, as '{{.*}}x.{{[0-3]}}.safetensors:NAME' (it holds 'x')
// RUN: not shardlin-run %S/Inputs/bf16-mlp.mlir --arg=%t/x.{rank}.npy --arg=%t/model.safetensors:model.layers.0.mlp.up_proj.weight --arg=%t/model.safetensors:model.layers.0.mlp.down_proj.weight --out='%t/out/y.{rank}.safetensors' --out='%t/out/h.{rank}.npy' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-NAME-OUT
// NO-NAME-OUT: error: --out '{{.*}}y.{rank}.safetensors' (result 0) names a safetensors file but no tensor in it: write '{{.*}}y.{rank}.safetensors:NAME' (a path without :NAME is written as one .npy array)

// A tensor of another dtype than the signature's.
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-mlp --k 64 --hidden 1024 --n 64 --rows 2 --world-size 1 --dtype f32 --out-dir %t/f32
// RUN: %python %shardlin_src/testing/tools/npytool.py safetensors --out %t/f32.safetensors up=%t/f32/w1.npy down=%t/f32/w2.npy
// RUN: not shardlin-run %S/Inputs/bf16-mlp.mlir --arg=%t/x.{rank}.npy --arg=%t/f32.safetensors:up --arg=%t/f32.safetensors:down --out='%t/out/y.{rank}.safetensors:y' --out='%t/out/h.{rank}.npy' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DTYPE
// DTYPE: error: rank {{[0-9]}}: argument 1 ({{.*}}f32.safetensors:up): safetensors dtype F32 does not match the entry signature's bf16 (expected BF16)

// A checkpoint cut short: the whole header is checked, so the tensor whose
// bytes run past the end is named whichever tensor the run asked for.
// RUN: head -c 262000 %t/model.safetensors > %t/cut.safetensors
// RUN: not shardlin-run %S/Inputs/bf16-mlp.mlir --arg=%t/x.{rank}.npy --arg=%t/cut.safetensors:model.layers.0.mlp.up_proj.weight --arg=%t/cut.safetensors:model.layers.0.mlp.down_proj.weight --out='%t/out/y.{rank}.safetensors:y' --out='%t/out/h.{rank}.npy' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CUT
// CUT: error: rank {{[0-9]}}: argument 1: '{{.*}}cut.safetensors': tensor 'model.layers.0.mlp.down_proj.weight': its data_offsets [131072, 262144] run past the data's {{[0-9]+}} bytes (the file ends there)

// An output naming the checkpoint, and one tensor written twice to a file.
// RUN: not shardlin-run %S/Inputs/bf16-mlp.mlir --arg=%t/x.{rank}.npy --arg=%t/model.safetensors:model.layers.0.mlp.up_proj.weight --arg=%t/model.safetensors:model.layers.0.mlp.down_proj.weight --out=%t/model.safetensors:y --out='%t/out/h.{rank}.npy' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=INPUT
// INPUT: error: --out '{{.*}}model.safetensors:y' (result 0) names the input of argument 1
// RUN: not shardlin-run %S/Inputs/bf16-mlp.mlir --arg=%t/x.{rank}.npy --arg=%t/model.safetensors:model.layers.0.mlp.up_proj.weight --arg=%t/model.safetensors:model.layers.0.mlp.down_proj.weight --out='%t/out/y.{rank}.safetensors:y' --out='%t/out/y.{rank}.safetensors:y' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=TWICE
// TWICE: error: --out '{{.*}}y.0.safetensors:y' (result 1) names the tensor 'y' of '{{.*}}y.0.safetensors' that another result writes
// Nothing was written by the failed runs.
// RUN: ls %t/out | count 0
