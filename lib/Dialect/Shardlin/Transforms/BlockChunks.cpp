//===- BlockChunks.cpp - Chunks of whole blocks as explicit bounds --------===//
//
// A chunk spec in whole blocks (`block = D`, the heads of an attention
// weight) resolves through ChunkAttr::getBoundsFor for a known dim size. A
// sharded type carries its static shape, so its chunks are replaced in
// place; an op's chunk attribute (local_chunk, the collectives) splits the
// largest static size of its dim among the op's tensors (the full one; the
// others are its chunk). The lowering runs this first, so that nothing it
// emits or hands on needs the block rule.
//
//===----------------------------------------------------------------------===//

#include "BlockChunks.h"

#include "shardlin/Dialect/Shardlin/IR/ShardlinOps.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinTypes.h"

#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::shardlin;

namespace {

bool needsBounds(ChunkAttr chunk) {
  return chunk && chunk.hasBlock() && !chunk.hasExplicitBounds();
}

/// The static size of dim `dim` that `op`'s chunk attribute splits: the
/// largest among its ranked tensor operands and results, or nullopt.
std::optional<int64_t> fullDimSize(Operation *op, int64_t dim) {
  std::optional<int64_t> n;
  auto visit = [&](Type t) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (!ranked || dim >= ranked.getRank() || ranked.isDynamicDim(dim))
      return;
    n = std::max(n.value_or(0), ranked.getDimSize(dim));
  };
  for (Type t : op->getOperandTypes())
    visit(t);
  for (Type t : op->getResultTypes())
    visit(t);
  return n;
}

} // namespace

LogicalResult mlir::shardlin::detail::materializeBlockChunks(Operation *root) {
  // Sharded types: their shape gives the size.
  AttrTypeReplacer types;
  types.addReplacement([](ShardedType t) -> std::optional<Type> {
    ChunkAttr chunk = t.getSharding();
    if (!needsBounds(chunk))
      return std::nullopt;
    return ShardedType::get(t.getContext(), t.getTensorType(),
                            chunk.withBoundsFor(t.getShape()[chunk.getDim()]));
  });
  types.recursivelyReplaceElementsIn(root, /*replaceAttrs=*/true,
                                     /*replaceLocs=*/false,
                                     /*replaceTypes=*/true);

  // Chunk attributes of ops: the op's full tensor gives the size.
  WalkResult result = root->walk([&](Operation *op) {
    for (NamedAttribute named : op->getAttrs()) {
      auto chunk = dyn_cast<ChunkAttr>(named.getValue());
      if (!needsBounds(chunk))
        continue;
      std::optional<int64_t> n = fullDimSize(op, chunk.getDim());
      if (!n) {
        op->emitOpError() << "'" << named.getName().getValue() << "' " << chunk
                          << " splits a dim whose size is not static, which "
                             "chunks of whole blocks need";
        return WalkResult::interrupt();
      }
      op->setAttr(named.getName(), chunk.withBoundsFor(*n));
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}
