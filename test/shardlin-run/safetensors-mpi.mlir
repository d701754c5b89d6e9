// REQUIRES: mpi
// The bf16 MLP of safetensors.mlir from a safetensors checkpoint under
// mpirun, one process per rank: each process reads only its rank's chunk of
// each weight (65792 bytes, its x included, of which 32768 from each
// weight's 131072), both results go into one safetensors file per rank, and
// every element is checked against the float64 reference. A sharded result
// written without {rank} (a weight returned as it is) is the whole tensor,
// assembled from the ranks' chunks, in one safetensors file. Every mpirun is
// bounded by `timeout`, so a hang fails the test.

// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-mlp --k 64 --hidden 1024 --n 64 --rows 2 --world-size 4 --dtype bf16 --seed 28 --out-dir %t
// RUN: %python %shardlin_src/testing/tools/npytool.py safetensors --out %t/model.safetensors model.layers.0.mlp.up_proj.weight=%t/w1.npy model.layers.0.mlp.down_proj.weight=%t/w2.npy

// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %S/Inputs/bf16-mlp.mlir --backend=mpi --verbose --strategy=activations --arg=%t/x.{rank}.npy --arg=%t/model.safetensors:model.layers.0.mlp.up_proj.weight --arg=%t/model.safetensors:model.layers.0.mlp.down_proj.weight --out='%t/y.{rank}.safetensors:y' --out='%t/y.{rank}.safetensors:h' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BYTES
// BYTES-DAG: rank 0: {{.*}}; read 65792 bytes of input files
// BYTES-DAG: rank 1: {{.*}}; read 65792 bytes of input files
// BYTES-DAG: rank 2: {{.*}}; read 65792 bytes of input files
// BYTES-DAG: rank 3: {{.*}}; read 65792 bytes of input files
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t --out '%t/y.{rank}.safetensors:y' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/h --out '%t/y.{rank}.safetensors:h' --world-size 4 --dtype bf16 | FileCheck %s --check-prefix=OK
// OK: ok: 4 ranks

// The sharded result without {rank}: the whole weight, bit for bit.
// RUN: timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 shardlin-run %s --backend=mpi --arg=%t/model.safetensors:model.layers.0.mlp.down_proj.weight --out=%t/whole.safetensors:w --out='%t/part.{rank}.safetensors:w'
// RUN: %python -c "import sys; sys.path.insert(0, '%shardlin_src/testing/tools'); import npytool as n; a = n.read_npy('%t/whole.safetensors:w'); b = n.read_npy('%t/w2.npy'); assert a[1:] == b[1:], 'differs'; p = n.read_npy('%t/part.1.safetensors:w'); assert p[1] == (64, 256), p[1]; print('whole ok')" | FileCheck %s --check-prefix=WHOLE
// WHOLE: whole ok

!w2 = !shardlin.sharded<tensor<64x1024xbf16>, #shardlin.chunk<dim = 1, placements = [0, 1, 2, 3]>>
func.func @main(%w: !w2) -> (!w2, !w2) {
  return %w, %w : !w2, !w2
}
