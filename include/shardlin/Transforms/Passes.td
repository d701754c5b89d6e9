//===- Passes.td - shardlin's passes on any module ---------*- tablegen -*-===//
//
// Passes that work on a module whatever its dialects (upstream's
// lib/Transforms is the model): --shardlin-externalize-parameters.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_TRANSFORMS_PASSES_TD
#define SHARDLIN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ExternalizeParameters
    : Pass<"shardlin-externalize-parameters", "::mlir::ModuleOp"> {
  let summary = "Move a module's large constants into a safetensors file, "
                "as named function arguments";
  let description = [{
    The form production pipelines use for weights (IREE's externalized
    parameters): the module keeps the computation, a safetensors file the
    tensors. For each `arith.constant` of a ranked tensor type with at
    least `min-elements` elements in the body of a public function (not in
    a region isolated from it), whose value is a `dense` (a splat is
    written expanded) or `dense_resource` elements attribute, the pass

    - appends an argument of the constant's type to the function, with the
      argument attribute `shardlin.parameter = "NAME"` (and the constant's
      location);
    - replaces the constant's uses with it (a `shard.shard` of the constant
      now annotates the argument: the import, `--shardlin-import-shard`,
      then sees a split argument) and erases the constant;
    - writes the tensor into `file` as tensor `NAME`, little-endian,
      C order.

    `NAME` is the resource's key for a `dense_resource` (torch-mlir's FX
    importer names a parameter by its state-dict name, `fc1.weight`, or by
    its own default, `torch_tensor_38_40_torch.float32`; both are kept as
    they are), else `<function>.cst<i>`, `i` counting the function's
    generated names from 0 in the order of the constants, skipping a name
    some resource already has. One value is one tensor: the same attribute
    in two constants of one function is one argument, and in two functions
    one tensor that each function takes as its own argument. A resource
    key used with two types is an error.

    The element types are those of the safetensors format: f16, bf16, f32,
    f64 (the runtime's), i1 (`BOOL`), i8 to i64 signless or signed (`I8`
    ... `I64`) and ui8 to ui64 (`U8` ... `U64`); a constant of any other
    element type (index, complex, f8, i4, ...) that is large enough is an
    error naming it (raise `min-elements` to leave it in place). So is a
    function that another function calls (its signature changes), a
    `dense_resource` whose blob the module does not hold, and a file that
    cannot be written (the file is written as `shardlin-run` writes its
    outputs: a temporary file renamed over the target, so a failed write
    leaves no new or changed file). A blob that nothing references any
    more leaves the module's `dialect_resources` (a module is printed, and
    written as bytecode, with the resources it references). A module with
    no constant to move writes no file.

    `shardlin-run --params=FILE` (and `shardlin-exec`, and the C ABI)
    loads every argument that has `shardlin.parameter` from the file by
    name, each rank reading only its chunk of a split one
    (docs/interop.md, "Externalized parameters").
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"",
           "The safetensors file to write (required)">,
    Option<"minElements", "min-elements", "int64_t", /*default=*/"16",
           "Move constants with at least this many elements (default 16: "
           "weights and biases, not the scalars and short shape vectors of "
           "an exporter's glue)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let statistics = [
    Statistic<"numParameters", "parameters", "Tensors written to the file">,
    Statistic<"numArguments", "arguments", "Function arguments added">
  ];
}

#endif // SHARDLIN_TRANSFORMS_PASSES_TD
