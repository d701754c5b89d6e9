// REQUIRES: mpi
// shardlin-run under mpirun, one process per rank (--backend=mpi): rank and
// W come from MPI. Every mpirun is bounded by `timeout`, so a hang fails the
// test (timeout's exit status 124) instead of stalling it.


// Row-wise, uneven and permuted (W = 4, K = 19 in chunks 5, 5, 5, 4 held by
// ranks 2, 3, 0, 1), with a bias.
// OK4: ok: 4 ranks

// Col-wise, uneven and permuted (N = 11 in chunks 3, 3, 3, 2 held by ranks
// 3, 0, 2, 1), with a bias; --world-size given and agreeing with MPI.

// An output path without {rank} is written by rank 0 only.
// OK1: ok: 1 ranks

// --world-size=3 under -np 4: every process fails, mpirun exits non-zero.
// W-MISMATCH: --world-size=3 does not match the MPI world size 4
// W-MISMATCH: {{^}}exit 1{{$}}

// The program's placements must match the MPI world size, too.
// PLACEMENTS: the MPI world size 3 does not match the 4 placements of the program's sharded values
// PLACEMENTS: {{^}}exit 1{{$}}

// A per-rank input missing on rank 2 only: the ranks agree before the first
// collective that their inputs loaded, so every process exits at once with
// an error (rank 2's names its file) instead of the others waiting in a
// collective; `timeout 60` turns a hang into exit 124, which fails the check.
// MISSING-RANK2: rank 2: argument 0: '[[T]]/no2/x.2.npy': cannot open: No such file or directory
// MISSING-RANK2: {{^}}exit 1{{$}}

// A dtype mismatch on every rank.
// DTYPE: argument 0 ([[T]]/d64/x.{{[0-3]}}.npy): element type '<f8' does not match the entry signature's f32 (expected '<f4')
// DTYPE: {{^}}exit 1{{$}}

// None of the failed runs wrote an output.

// Without mpirun, --backend=mpi runs a world of one process, which does not
// match the 4 placements.
// SINGLETON: shardlin-run: error: the MPI world size 1 does not match the 4 placements of the program's sharded values
// SINGLETON-NEXT: exit 1
