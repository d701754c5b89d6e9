// Contract tests of shardlin-run's command line with the threads backend:
// each case makes inputs and a float64 reference with scripts/npytool.py,
// runs the program on W ranks (one thread each) and checks every rank's
// output against the reference (npytool check fails, and prints why, on a
// wrong dtype, shape or value). The programs are under Inputs/.


// Row-wise, uneven and permuted (W = 4, K = 19 in chunks 5, 5, 5, 4 held by
// ranks 2, 3, 0, 1), with a bias; per-rank inputs and outputs.
// The same with the explicit default backend, and with --world-size left
// out (W is then the number of placements).
// OK4: ok: 4 ranks

// Col-wise, W = 3, uneven and permuted (N = 10 in chunks 4, 4, 2 held by
// ranks 1, 2, 0), no bias.
// OK3: ok: 3 ranks

// A 1-D input (batch shape ''): x is (9,), y is (6,); one rank holds an
// empty chunk of K.
// VEC-SHAPE: <f4 (6,)

// A 3-D input (batch shape 2x3), col-wise.
// 3D-SHAPE: <f4 (2, 3, 7)

// f64 (<f8), row-wise over W = 3.

// f16 (<f2), col-wise over W = 4.

// bf16 (<u2 bit patterns), row-wise over W = 4.

// W = 1.
// OK1: ok: 1 ranks

// An input path without {rank} is read by every rank: all four ranks take
// x.0.npy, so each rank's output must equal rank 0's reference. The
// generated inputs differ per rank, so a rank that read its own x.{rank}
// would fail the check against the copied references.

// An output path without {rank} is written by rank 0 only: the output
// directory holds exactly y.npy (no per-rank files, no leftover temporary
// files), and it is rank 0's result.
// SINGLE: y.npy

// --entry picks one of two public functions (no `main`); each entry only
// accepts its own files, so a wrong pick fails the shape check.
// OK2: ok: 2 ranks

// Among several public functions, `main` is the default entry.
