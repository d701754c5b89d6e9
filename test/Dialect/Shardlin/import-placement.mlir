// Where an annotation sits does not change the program (issue 40, item 6).
// Each module of Inputs/placement/ states the weights' shardings (x split
// along its 10 rows at offsets, the col-wise weights along N = 38 and the
// row-wise ones along K = 38 at offsets [0, 10, 20, 29, 38]) and the hidden
// values' sharding (split along their features, like the weights) nowhere,
// at the col-wise linear's output (shard.shard), at the row-wise linear's
// input (annotate_for_users) or at both. Every placement lowers to the same
// collectives, counted here exactly (--implicit-check-not), with
// strategy=activations so that the cost model's choice between moving
// activations and gathering weights stays out of the comparison:
// - the import propagates a stated layout back to the producer that gives
//   it directly (the hidden of an MLP or SwiGLU becomes `features`, its
//   col-wise linear `rows -> features`: ImportShardPropagation.cpp);
// - --lower-sharded-linear then simplifies the collectives where the
//   linears' and the reshards meet (all_reduce + local_chunk of the rank's
//   rows = reduce_scatter, local_chunk of an all_gather of the same chunks =
//   the rank's part, two gathers of one value = one: SimplifyCollectives.cpp).
// Before these (2026-12-07, strategy=activations; AG all_gather, RS
// reduce_scatter, A2A all_to_all, AR all_reduce, LC local_chunk):
//   case            none            out            in                       both
//   mlp             AG RS           AG RS          2AG A2A LC RS            AG RS
//   swiglu          AG RS           2AG RS         3AG 2A2A LC RS           2AG RS
//   residual        2AG 2RS         2AG 2AR 2LC    4AG 2AR 2A2A 4LC         2AG 2AR 2LC
//   residual-repl   4AG 2LC 2RS     2AG 2AR 2LC    4AG 2AR 2A2A 4LC         2AG 2AR 2LC
//   bias (none / arg / use / both): AG LC RS / 2AG LC RS / 2AG 2LC RS / 2AG LC RS
// Now every placement of a case gives the same, fewest: AG RS for the MLP
// and the SwiGLU, 2AG 2RS for both residual stacks, AG LC RS for a
// replicated bias and AG RS for one stated split (its chunk passed as is).
// test/shardlin-run/import-placement.mlir runs the MLP and the residual
// stack in several placements against float64.

// MLP and SwiGLU: one all_gather (x's rows), one reduce_scatter.
// RUN: shardlin-opt %S/Inputs/placement/mlp-none.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=BLOCK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/mlp-out.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=BLOCK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/mlp-in.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=BLOCK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/mlp-both.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=BLOCK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/swiglu-none.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=BLOCK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/swiglu-out.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=BLOCK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/swiglu-in.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=BLOCK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/swiglu-both.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=BLOCK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// BLOCK-LABEL: func.func
// BLOCK: shardlin.all_gather %{{.*}} along <dim = 0, placements = [0, 1, 2, 3]>
// BLOCK: shardlin.reduce_scatter

// The residual stack of two blocks, with its row-wise outputs unstated or
// stated replicated: one all_gather and one reduce_scatter per block.
// RUN: shardlin-opt %S/Inputs/placement/residual-none.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=STACK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/residual-out.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=STACK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/residual-in.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=STACK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/residual-both.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=STACK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/residual-repl-none.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=STACK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/residual-repl-out.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=STACK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/residual-repl-in.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=STACK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/residual-repl-both.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=STACK --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// STACK-LABEL: func.func
// STACK: shardlin.all_gather
// STACK: shardlin.reduce_scatter
// STACK: shardlin.all_gather
// STACK: shardlin.reduce_scatter

// A col-wise bias added by a broadcast linalg.generic: replicated, the
// rank's chunk of it (one local_chunk); stated split, the rank's chunk as
// it is passed (none).
// RUN: shardlin-opt %S/Inputs/placement/bias-none.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=BIASREP --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/bias-use.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=BIASREP --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/bias-arg.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=BIASSPLIT --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// RUN: shardlin-opt %S/Inputs/placement/bias-both.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=BIASSPLIT --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// BIASREP-LABEL: func.func
// BIASREP-DAG: shardlin.local_chunk %{{.*}} along <dim = 0, placements = [0, 1, 2, 3], bounds = [0, 10, 20, 29, 38]> : tensor<38xf32> -> tensor<?xf32>
// BIASREP-DAG: shardlin.all_gather
// BIASREP: shardlin.reduce_scatter
// BIASSPLIT-LABEL: func.func
// BIASSPLIT: shardlin.all_gather
// BIASSPLIT: shardlin.reduce_scatter

// Not propagated where the value is used otherwise too: the hidden value
// also returned keeps its rows (a rows -> rows linear: all_gather,
// all_to_all), and the annotation at the row-wise input reshards it
// (all_gather, local_chunk).
// RUN: shardlin-opt %S/Inputs/placement/mlp-in-returned.mlir --lower-sharded-linear=strategy=activations | FileCheck %s --check-prefix=KEPT --implicit-check-not=shardlin.all_gather --implicit-check-not=shardlin.reduce_scatter --implicit-check-not=shardlin.all_to_all --implicit-check-not=shardlin.all_reduce --implicit-check-not=shardlin.local_chunk
// KEPT-LABEL: func.func
// KEPT: shardlin.all_gather
// KEPT: shardlin.all_to_all
// KEPT: shardlin.all_gather
// KEPT: shardlin.local_chunk
// KEPT: shardlin.reduce_scatter

// Where a stated sharding forces more than the propagated one, explain=true
// says so and the program does what it says: the MLP's hidden value stated
// replicated is gathered (the block is then two separate linears).
// RUN: shardlin-opt %S/Inputs/placement/mlp-replicated.mlir '--lower-sharded-linear=strategy=activations explain=true' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORCED
// FORCED: mlp-replicated.mlir:21:8: remark: this all_gather is the cost of the sharding stated for this value (replicated; its producer gives split along dim 0 over 4 devices): without it the value stays in its producer's layout (up to 1368 bytes sent per rank)
// Without explain, nothing is said and the mark is gone.
// RUN: shardlin-opt %S/Inputs/placement/mlp-replicated.mlir --lower-sharded-linear=strategy=activations 2>&1 | FileCheck %s --check-prefix=QUIET
// QUIET-NOT: remark
// QUIET-NOT: stated_reshard
// QUIET: shardlin.all_gather
