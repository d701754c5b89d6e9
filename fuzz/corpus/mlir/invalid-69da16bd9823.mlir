// expected-error@+1 {{chunk placements [2, 0] are not a permutation of 0..1: placement 2 at position 0 is out of range [0, 1]}}
func.func @chunk_placement_too_large() attributes {s = #shardlin.chunk<dim = 0, placements = [2, 0]>} {
  return
}
