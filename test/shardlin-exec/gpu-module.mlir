// The GPU backends live in the runtime's GPU module
// (libshardlin-runtime-cuda.so), loaded only when a GPU backend or the
// device list is asked for: --version and CPU runs map none of CUDA's
// libraries (the dynamic loader's own trace, LD_DEBUG=files, lists every
// library it opens), and a missing module is one clear error naming it.
//
// REQUIRES: cuda

// RUN: rm -rf %t && mkdir -p %t/out
// RUN: shardlin-run %s --emit-program=%t/row.prog
// RUN: %python %shardlin_src/testing/tools/npytool.py gen-linear --n 6 --k 8 --batch-shape 4 --world-size 2 --bias --seed 5 --out-dir %t/d

// --version says where the module is, without loading it.
// RUN: env LD_DEBUG=files shardlin-exec --version 2>&1 | FileCheck %s --check-prefix=VERSION --implicit-check-not=libcudart --implicit-check-not=libcublas --implicit-check-not=libnccl
// RUN: env LD_DEBUG=files shardlin-run --version 2>&1 | FileCheck %s --check-prefix=VERSION --implicit-check-not=libcudart --implicit-check-not=libcublas --implicit-check-not=libnccl
// VERSION: gpu: module {{.+}}/libshardlin-runtime-cuda.so (not loaded; shardlin-exec --gpus lists the devices)

// A threads run loads none of them either.
// RUN: env LD_DEBUG=files shardlin-exec %t/row.prog --world-size=2 --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/y.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CPU --implicit-check-not=libcudart --implicit-check-not=libcublas --implicit-check-not=libnccl --implicit-check-not=libshardlin-runtime-cuda
// CPU: file=libopenblas
// RUN: %python %shardlin_src/testing/tools/npytool.py check --dir %t/d --out '%t/out/y.{rank}.npy' --world-size 2 | FileCheck %s --check-prefix=OK
// OK: ok: 2 ranks

// --gpus loads the module, and with it CUDA's runtime.
// RUN: env LD_DEBUG=files shardlin-exec --gpus 2>&1 | FileCheck %s --check-prefix=GPUS
// GPUS: file={{.*}}libshardlin-runtime-cuda.so
// GPUS: file=libcudart
// GPUS: gpu: {{none \(.+\)|[1-9][0-9]* devices?: cuda:0 .+}}

// Without the module, running a GPU backend says which file is missing and
// where it was looked for; --version says so too. Exit status 1.
// RUN: mkdir -p %t/bin && cp shardlin-exec %t/bin/shardlin-exec
// RUN: %t/bin/shardlin-exec --version | FileCheck %s --check-prefix=NO-MODULE-VERSION -DDIR=%t/bin
// NO-MODULE-VERSION: gpu: module missing (libshardlin-runtime-cuda.so not found (looked for [[DIR]]/libshardlin-runtime-cuda.so, [[DIR]]/../lib/libshardlin-runtime-cuda.so, {{.+}}; set SHARDLIN_RUNTIME_CUDA_MODULE to its path))
// RUN: not %t/bin/shardlin-exec %t/row.prog --world-size=2 --backend=cuda-local --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/z.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-MODULE -DBACKEND=cuda-local -DDIR=%t/bin --match-full-lines --implicit-check-not='{{.}}'
// RUN: not %t/bin/shardlin-exec %t/row.prog --world-size=2 --backend=nccl --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/z.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NO-MODULE -DBACKEND=nccl -DDIR=%t/bin --match-full-lines --implicit-check-not='{{.}}'
// NO-MODULE: shardlin-exec: error: the [[BACKEND]] backend needs the runtime's GPU module: libshardlin-runtime-cuda.so not found (looked for [[DIR]]/libshardlin-runtime-cuda.so, [[DIR]]/../lib/libshardlin-runtime-cuda.so, {{.+}}; set SHARDLIN_RUNTIME_CUDA_MODULE to its path)
// RUN: test ! -e %t/out/z.0.npy

// SHARDLIN_RUNTIME_CUDA_MODULE names the module; a wrong path is the error.
// RUN: env SHARDLIN_RUNTIME_CUDA_MODULE=%t/none.so not shardlin-run %s --backend=cuda-local --arg=%t/d/x.{rank}.npy --arg=%t/d/w.npy --arg=%t/d/b.npy --out=%t/out/z.{rank}.npy 2>&1 \
// RUN:   | FileCheck %s --check-prefix=ENV -DPATH=%t/none.so --match-full-lines --implicit-check-not='{{.}}'
// ENV: shardlin-run: error: the cuda-local backend needs the runtime's GPU module: SHARDLIN_RUNTIME_CUDA_MODULE names [[PATH]], which is not a file
// A file that is not the module is loaded and refused: it registers nothing.
// RUN: cp %t/d/b.npy %t/not-a-module.so
// RUN: env SHARDLIN_RUNTIME_CUDA_MODULE=%t/not-a-module.so shardlin-exec --gpus | FileCheck %s --check-prefix=NOT-MODULE -DPATH=%t/not-a-module.so
// NOT-MODULE: gpu: none (loading [[PATH]] failed: [[PATH]]: {{.+}})

func.func @main(%x: tensor<4x8xf32>,
                %w: !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>,
                %b: tensor<6xf32>) -> tensor<4x6xf32> {
  %y = shardlin.linear %x, %w, %b : (tensor<4x8xf32>, !shardlin.sharded<tensor<6x8xf32>, #shardlin.chunk<dim = 1, placements = [1, 0]>>, tensor<6xf32>) -> tensor<4x6xf32>
  return %y : tensor<4x6xf32>
}
