//===- ShardlinAttrs.cpp - shardlin attributes ----------------------------===//

#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/runtime/base/ChunkLayout.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::shardlin;

#include "shardlin/Dialect/Shardlin/IR/ShardlinEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.cpp.inc"

void ShardlinDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.cpp.inc"
      >();
}


namespace rt = ::shardlin::rt;

static std::vector<int64_t> toVector(ArrayRef<int64_t> a) {
  return std::vector<int64_t>(a.begin(), a.end());
}

LogicalResult
ChunkAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t dim,
                  ArrayRef<int64_t> placements, ArrayRef<int64_t> bounds) {
  if (dim < 0)
    return emitError() << "chunk dim must be non-negative, got " << dim;
  // Checked here, before checkPlacements, for a message that names the
  // attribute; checkPlacements reports the other violations.
  if (placements.empty())
    return emitError() << "chunk placements must not be empty";
  std::string problem = rt::checkPlacements(toVector(placements));
  if (!problem.empty())
    return emitError() << "chunk placements [" << placements
                       << "] are not a permutation of 0.."
                       << static_cast<int64_t>(placements.size()) - 1 << ": "
                       << problem;
  if (bounds.empty())
    return success();
  problem = rt::checkBounds(toVector(bounds),
                            static_cast<int64_t>(placements.size()));
  if (!problem.empty())
    return emitError() << "chunk bounds [" << bounds << "] are invalid: "
                       << problem;
  return success();
}

/// `[v0, v1, ...]` into `out`.
static ParseResult parseIntList(AsmParser &parser,
                                SmallVectorImpl<int64_t> &out) {
  return parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
    int64_t v = 0;
    if (parser.parseInteger(v))
      return failure();
    out.push_back(v);
    return success();
  });
}

Attribute ChunkAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  int64_t dim = 0;
  SmallVector<int64_t> placements, bounds;
  if (parser.parseLess() || parser.parseKeyword("dim") ||
      parser.parseEqual() || parser.parseInteger(dim) ||
      parser.parseComma() || parser.parseKeyword("placements") ||
      parser.parseEqual() || parseIntList(parser, placements))
    return {};
  if (succeeded(parser.parseOptionalComma()) &&
      (parser.parseKeyword("bounds") || parser.parseEqual() ||
       parseIntList(parser, bounds)))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), dim, placements, bounds);
}

void ChunkAttr::print(AsmPrinter &printer) const {
  printer << "<dim = " << getDim() << ", placements = [";
  llvm::interleaveComma(getPlacements(), printer);
  printer << "]";
  if (hasExplicitBounds()) {
    printer << ", bounds = [";
    llvm::interleaveComma(getBounds(), printer);
    printer << "]";
  }
  printer << ">";
}

SmallVector<int64_t> ChunkAttr::getBoundsFor(int64_t n) const {
  if (hasExplicitBounds())
    return SmallVector<int64_t>(getBounds());
  std::vector<int64_t> b = rt::ceilBounds(n, getNumChunks());
  return SmallVector<int64_t>(b.begin(), b.end());
}

std::pair<int64_t, int64_t> ChunkAttr::getChunkRange(int64_t n,
                                                     int64_t c) const {
  rt::Range r = hasExplicitBounds()
                    ? rt::boundsRange(toVector(getBounds()), c)
                    : rt::chunkRange(n, getNumChunks(), c);
  return {r.offset, r.size};
}

int64_t ChunkAttr::getLocalSize(int64_t n) const {
  if (ShapedType::isDynamic(n) || n < 0)
    return ShapedType::kDynamic;
  if (hasExplicitBounds()) {
    // Equal chunks are the ceil rule's (boundsUniform), so the size is
    // static exactly when it would be without the bounds.
    if (!rt::boundsUniform(toVector(getBounds())))
      return ShapedType::kDynamic;
    return getBounds()[1];
  }
  if (!rt::chunksUniform(n, getNumChunks()))
    return ShapedType::kDynamic;
  return n / getNumChunks();
}

LogicalResult
ChunkAttr::verifyDimSize(function_ref<InFlightDiagnostic()> emitError,
                         int64_t n, StringRef what) const {
  if (!hasExplicitBounds())
    return success();
  if (ShapedType::isDynamic(n))
    return emitError() << what << " is dynamic, but the chunk bounds ["
                       << getBounds() << "] need a static size";
  if (getBounds().back() != n)
    return emitError() << what << " has " << n
                       << " elements, but the chunk bounds [" << getBounds()
                       << "] end at " << getBounds().back();
  return success();
}

ChunkAttr ChunkAttr::withDim(int64_t dim) const {
  return ChunkAttr::get(getContext(), dim, getPlacements(), getBounds());
}

bool ChunkAttr::sameChunks(ChunkAttr other, int64_t n) const {
  return getPlacements() == other.getPlacements() &&
         getBoundsFor(n) == other.getBoundsFor(n);
}
