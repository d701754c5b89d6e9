// RUN: shardlin-opt %s --shardlin-prepare-native | FileCheck %s
// RUN: shardlin-opt %s --shardlin-prepare-native --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s --check-prefix=BUF

// Public function definitions become entries (C interface, read-only
// arguments unless marked otherwise); linalg.softmax is decomposed into the
// linalg ops it is made of, which lower to loops after bufferization.

// CHECK-LABEL: func.func @entry
// CHECK-SAME: (%{{.*}}: tensor<4x6xf32> {bufferization.writable = false}, %{{.*}}: tensor<6xf32> {bufferization.writable = true}, %{{.*}}: index)
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK-NOT: linalg.softmax
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: arith.divf
// CHECK-NOT: linalg.softmax
func.func @entry(%x: tensor<4x6xf32>, %b: tensor<6xf32> {bufferization.writable = true}, %i: index) -> tensor<4x6xf32> {
  %e = tensor.empty() : tensor<4x6xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %s : tensor<4x6xf32>
}

// Private functions and declarations are not entries.
// CHECK-LABEL: func.func private @helper
// CHECK-SAME: (%{{.*}}: tensor<4xf32>) {
func.func private @helper(%x: tensor<4xf32>) {
  return
}

// CHECK-LABEL: func.func private @external
// CHECK-SAME: (tensor<4xf32>){{$}}
func.func private @external(%x: tensor<4xf32>)

// An entry's arguments are the caller's buffers: an in-place bias_add on
// one works on a copy (without shardlin-prepare-native it would write the caller's
// array).
// CHECK-LABEL: func.func @entry_bias_add
// CHECK-SAME: (%{{.*}}: tensor<4x3xf32> {bufferization.writable = false}, %{{.*}}: tensor<3xf32> {bufferization.writable = false})
// BUF-LABEL: func.func @entry_bias_add
// BUF-SAME: (%[[Y:.*]]: memref<4x3xf32>, %[[B:.*]]: memref<3xf32>)
// BUF-NEXT: %[[COPY:.*]] = memref.alloc()
// BUF-NEXT: memref.copy %[[Y]], %[[COPY]]
// BUF-NEXT: shardlin.buffer.bias_add %[[COPY]], %[[B]] into %[[COPY]]
// BUF-NEXT: return %[[COPY]]
func.func @entry_bias_add(%y: tensor<4x3xf32>, %b: tensor<3xf32>) -> tensor<4x3xf32> {
  %z = shardlin.bias_add %y, %b : tensor<4x3xf32>, tensor<3xf32>
  return %z : tensor<4x3xf32>
}
