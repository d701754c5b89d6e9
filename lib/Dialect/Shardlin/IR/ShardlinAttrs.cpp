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
                  ArrayRef<int64_t> placements, ArrayRef<int64_t> bounds,
                  int64_t block) {
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
  if (block < 1)
    return emitError() << "chunk block must be positive, got " << block;
  if (bounds.empty())
    return success();
  problem = rt::checkBounds(toVector(bounds),
                            static_cast<int64_t>(placements.size()));
  if (!problem.empty())
    return emitError() << "chunk bounds [" << bounds << "] are invalid: "
                       << problem;
  for (int64_t b : bounds)
    if (b % block != 0)
      return emitError() << "chunk bound " << b << " in [" << bounds
                         << "] splits a block of " << block
                         << " (every bound must be a multiple of the block)";
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
  // `, bounds = [...]` and `, block = D`, each optional, in this order.
  int64_t block = 1;
  bool sawBlock = false;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "bounds" && bounds.empty() && !sawBlock) {
      if (parseIntList(parser, bounds))
        return {};
    } else if (key == "block" && !sawBlock) {
      sawBlock = true;
      if (parser.parseInteger(block))
        return {};
    } else {
      parser.emitError(keyLoc)
          << "expected `bounds` or `block` (once each, in this order), got `"
          << key << "`";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), dim, placements, bounds, block);
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
  if (hasBlock())
    printer << ", block = " << getBlock();
  printer << ">";
}

SmallVector<int64_t> ChunkAttr::getBoundsFor(int64_t n) const {
  if (hasExplicitBounds())
    return SmallVector<int64_t>(getBounds());
  // The ceil rule over whole blocks, scaled: block = 1 is the plain rule.
  // Callers pass a multiple of the block (verifyDimSize); a remainder would
  // be left to the last chunk rather than lost.
  const int64_t block = getBlock();
  std::vector<int64_t> b = rt::ceilBounds(n / block, getNumChunks());
  SmallVector<int64_t> out;
  for (int64_t v : b)
    out.push_back(v * block);
  out.back() = n;
  return out;
}

std::pair<int64_t, int64_t> ChunkAttr::getChunkRange(int64_t n,
                                                     int64_t c) const {
  if (hasBlock() && !hasExplicitBounds()) {
    SmallVector<int64_t> b = getBoundsFor(n);
    return {b[c], b[c + 1] - b[c]};
  }
  rt::Range r = hasExplicitBounds()
                    ? rt::boundsRange(toVector(getBounds()), c)
                    : rt::chunkRange(n, getNumChunks(), c);
  return {r.offset, r.size};
}

int64_t ChunkAttr::getLocalSize(int64_t n) const {
  if (ShapedType::isDynamic(n) || n < 0)
    return ShapedType::kDynamic;
  if (hasBlock() && !hasExplicitBounds()) {
    SmallVector<int64_t> b = getBoundsFor(n);
    if (!rt::boundsUniform(std::vector<int64_t>(b.begin(), b.end())))
      return ShapedType::kDynamic;
    return b[1];
  }
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
  if (hasBlock() && !hasExplicitBounds()) {
    if (ShapedType::isDynamic(n))
      return emitError() << what << " is dynamic, but the chunk block "
                         << getBlock() << " needs a static size";
    if (n % getBlock() != 0)
      return emitError() << what << " has " << n
                         << " elements, not a whole number of blocks of "
                         << getBlock() << " (the chunks would split a block)";
    return success();
  }
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
  return ChunkAttr::get(getContext(), dim, getPlacements(), getBounds(),
                        getBlock());
}

ChunkAttr ChunkAttr::withBoundsFor(int64_t n) const {
  if (hasExplicitBounds() || !hasBlock())
    return *this;
  return ChunkAttr::get(getContext(), getDim(), getPlacements(),
                        getBoundsFor(n), getBlock());
}

bool ChunkAttr::sameChunks(ChunkAttr other, int64_t n) const {
  return getPlacements() == other.getPlacements() &&
         getBoundsFor(n) == other.getBoundsFor(n);
}
