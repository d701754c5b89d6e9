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

#define GET_ATTRDEF_CLASSES
#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.cpp.inc"

void ShardlinDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "shardlin/Dialect/Shardlin/IR/ShardlinAttrs.cpp.inc"
      >();
}


LogicalResult
ChunkAttr::verify(function_ref<InFlightDiagnostic()> emitError, int64_t dim,
                  ArrayRef<int64_t> placements) {
  if (dim < 0)
    return emitError() << "chunk dim must be non-negative, got " << dim;
  // Checked here, before checkPlacements, for a message that names the
  // attribute; checkPlacements reports the other violations.
  if (placements.empty())
    return emitError() << "chunk placements must not be empty";
  std::string problem = ::shardlin::rt::checkPlacements(
      std::vector<int64_t>(placements.begin(), placements.end()));
  if (!problem.empty())
    return emitError() << "chunk placements [" << placements
                       << "] are not a permutation of 0.."
                       << static_cast<int64_t>(placements.size()) - 1 << ": "
                       << problem;
  return success();
}

Attribute ChunkAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  int64_t dim = 0;
  SmallVector<int64_t> placements;
  if (parser.parseLess() || parser.parseKeyword("dim") ||
      parser.parseEqual() || parser.parseInteger(dim) ||
      parser.parseComma() || parser.parseKeyword("placements") ||
      parser.parseEqual())
    return {};
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        int64_t p = 0;
        if (parser.parseInteger(p))
          return failure();
        placements.push_back(p);
        return success();
      }))
    return {};
  if (parser.parseGreater())
    return {};
  return getChecked([&] { return parser.emitError(loc); },
                    parser.getContext(), dim, placements);
}

void ChunkAttr::print(AsmPrinter &printer) const {
  printer << "<dim = " << getDim() << ", placements = [";
  llvm::interleaveComma(getPlacements(), printer);
  printer << "]>";
}

int64_t ChunkAttr::getLocalSize(int64_t n) const {
  if (ShapedType::isDynamic(n) || n < 0)
    return ShapedType::kDynamic;
  if (!::shardlin::rt::chunksUniform(n, getNumChunks()))
    return ShapedType::kDynamic;
  return n / getNumChunks();
}
