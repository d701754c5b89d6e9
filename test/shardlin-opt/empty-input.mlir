// An empty input is an empty module (it is valid MLIR, so this is not an
// error), and so is a file that holds only comments, such as this one; the
// pass leaves it as it is.
// RUN: shardlin-opt /dev/null | FileCheck %s
// RUN: shardlin-opt < /dev/null | FileCheck %s
// RUN: shardlin-opt %s | FileCheck %s
// RUN: shardlin-opt %s --lower-sharded-linear | FileCheck %s

// CHECK: module {
// CHECK-NEXT: }
// CHECK-NOT: {{.}}
