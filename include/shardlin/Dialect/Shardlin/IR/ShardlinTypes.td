//===- ShardlinTypes.td - shardlin types -------------------*- tablegen -*-===//
#ifndef SHARDLIN_TYPES_TD
#define SHARDLIN_TYPES_TD

include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "mlir/IR/CommonTypeConstraints.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// The element types of every shardlin tensor: those the runtime's
// collectives and GEMMs implement. The summary is the text of the diagnostic
// for any other type and of the generated docs. The sharded type's verifier
// calls the C++ predicate generated from it (`isSupportedElementType`).
def Shardlin_ElementType : AnyTypeOf<[F16, BF16, F32, F64],
                                     "f16, bf16, f32 or f64"> {
  let cppFunctionName = "isSupportedElementType";
}

// A ranked tensor of a supported element type: the type of every tensor
// operand and result of the shardlin ops.
def Shardlin_Tensor : RankedTensorOf<[Shardlin_ElementType]>;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Shardlin_ShardedType : TypeDef<Shardlin_Dialect, "Sharded"> {
  let mnemonic = "sharded";
  let summary = "A global tensor of which each rank holds one chunk";
  let description = [{
    `!shardlin.sharded<tensor<11x19xf32>, #shardlin.chunk<dim = 1,
    placements = [2, 3, 0, 1]>>` is a global tensor with the given static
    shape and element type, split by the chunk spec: rank `placements[i]`
    holds chunk i along `dim`. Its rank-local part is obtained with
    `shardlin.local_shard`.

    Constraints: the tensor has a static shape and rank >= 1, its element
    type is f16, bf16, f32 or f64, and the spec's `dim` is one of its
    dimensions.
  }];
  let parameters = (ins "::mlir::RankedTensorType":$tensorType,
                        "::mlir::shardlin::ChunkAttr":$sharding);
  let assemblyFormat = "`<` $tensorType `,` qualified($sharding) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    ::llvm::ArrayRef<int64_t> getShape() const {
      return getTensorType().getShape();
    }
    ::mlir::Type getElementType() const {
      return getTensorType().getElementType();
    }
    int64_t getNumRanks() const { return getSharding().getNumChunks(); }
    /// The type of one rank's chunk: the global shape with the sharded dim
    /// replaced by the local chunk size (`?` when chunks are uneven).
    ::mlir::RankedTensorType getLocalType() const;
  }];
}

#endif // SHARDLIN_TYPES_TD
