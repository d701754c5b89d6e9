//===- RowLayerProgram.h - A row-wise layer as a program text ---*- C++ -*-===//
//
// The row-wise layer y_r = x_r A^T over W = 2 that ExecuteTest.cpp replays
// and GridTest.cpp runs as a grid's replica: x (3 x 4) per rank, A (5 x 4)
// split along K, as the translator emits it (all_to_all, GEMM,
// reduce_scatter).
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_UNITTESTS_RUNTIME_EXEC_ROWLAYERPROGRAM_H
#define SHARDLIN_UNITTESTS_RUNTIME_EXEC_ROWLAYERPROGRAM_H

#include <cstdint>

namespace shardlin::rt::test {

constexpr int kRowLayerW = 2;
constexpr int64_t kRowLayerRows = 3, kRowLayerN = 5, kRowLayerK = 4;

inline const char *const kRowLayerW2 = R"(shardlin-program v1
name main
world_size 2
values 6
value 0 f32 2 3 4
value 1 f32 2 5 ?
value 2 f32 2 5 ?
value 3 f32 2 6 ?
value 4 f32 2 6 5
value 5 f32 2 3 5
arg 0 plain
arg 1 sharded 2 5 4 spec 1 2 1 0
instr local_shard result 2 operands 1 1
instr all_to_all result 3 operands 1 0 chunk 1 2 1 0 concat 0 2 0 1
instr gemm result 4 operands 2 3 2 trans 0 1
instr reduce_scatter result 5 operands 1 4 chunk 0 2 0 1
results 1 5
end
)";

} // namespace shardlin::rt::test

#endif // SHARDLIN_UNITTESTS_RUNTIME_EXEC_ROWLAYERPROGRAM_H
