// One case per verifier rule of the shardlin attributes, types and ops; each
// expects the specific message of that rule.

//===----------------------------------------------------------------------===//
// #shardlin.chunk
//===----------------------------------------------------------------------===//

// expected-error@+1 {{chunk dim must be non-negative, got -1}}
func.func @chunk_negative_dim() attributes {s = #shardlin.chunk<dim = -1, placements = [0]>} {
  return
}
