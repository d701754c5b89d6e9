// An empty input is an empty module (it is valid MLIR, so this is not an
// error), and so is a file that holds only comments, such as this one; the
// pass leaves it as it is.
