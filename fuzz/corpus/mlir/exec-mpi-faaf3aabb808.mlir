// REQUIRES: mpi
// shardlin-exec under mpirun (--backend=mpi), one process per rank, on
// programs emitted by shardlin-run. Every mpirun is bounded by `timeout`.


// Row-wise, uneven and permuted, W = 4, with a bias.
// OK4: ok: 4 ranks

// Col-wise, uneven and permuted, W = 4, with a bias; --world-size agrees.

// --world-size=3 under -np 4.
// W-MISMATCH: --world-size=3 does not match the MPI world size 4
// W-MISMATCH: {{^}}exit 1{{$}}

// A per-rank input missing on rank 2: no hang, rank 2's error names it.
// MISSING-RANK2: rank 2: argument 0: '[[T]]/no2/x.2.npy': cannot open: No such file or directory
// MISSING-RANK2: {{^}}exit 1{{$}}

// A garbage program on every process.
// GARBAGE: [[T]]/garbage.prog: not a shardlin program (expected the header 'shardlin-program v1')
// GARBAGE: {{^}}exit 1{{$}}
