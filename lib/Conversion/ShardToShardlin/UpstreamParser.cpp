//===- UpstreamParser.cpp - Text MLIR 22's parser would crash on ----------===//
//
// findUpstreamParserCrash (ImportShard.h): a scan of the input text, run by
// the tools and the fuzz targets before mlir::parseSourceFile, for the
// custom forms whose upstream parsers dereference a null attribute.
//
//===----------------------------------------------------------------------===//

#include "shardlin/Conversion/ShardToShardlin/ShardToShardlin.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

namespace {

bool isIdentifierChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.';
}

/// Skips spaces and `//` comments from `i`.
size_t skipTrivia(StringRef text, size_t i) {
  while (i < text.size()) {
    if (llvm::isSpace(text[i])) {
      ++i;
    } else if (text.substr(i).starts_with("//")) {
      i = text.find('\n', i);
      if (i == StringRef::npos)
        return text.size();
    } else {
      break;
    }
  }
  return i;
}

/// Whether text[i..] is an integer DenseI64ArrayAttr::parse reads (decimal,
/// optionally negative, or hexadecimal), advancing `i` past it.
bool readInteger(StringRef text, size_t &i) {
  if (i < text.size() && text[i] == '-')
    ++i;
  if (text.substr(i).starts_with("0x")) {
    size_t start = i += 2;
    while (i < text.size() && llvm::isHexDigit(text[i]))
      ++i;
    return i > start && i - start <= 15;
  }
  size_t start = i;
  while (i < text.size() && llvm::isDigit(text[i]))
    ++i;
  // Up to 18 digits always fit an int64_t.
  return i > start && i - start <= 18;
}

/// Whether text[i..] is `[` integers separated by commas `]`.
bool isIntegerList(StringRef text, size_t i) {
  if (i >= text.size() || text[i] != '[')
    return false;
  i = skipTrivia(text, i + 1);
  if (i < text.size() && text[i] == ']')
    return true;
  for (;;) {
    if (!readInteger(text, i))
      return false;
    i = skipTrivia(text, i);
    if (i >= text.size())
      return false;
    if (text[i] == ']')
      return true;
    if (text[i] != ',')
      return false;
    i = skipTrivia(text, i + 1);
  }
}

} // namespace

std::optional<size_t> mlir::shardlin::findUpstreamParserCrash(StringRef text) {
  // The last significant character before the current token: the custom
  // forms put the keyword right after `outs(...)`, the generic form after
  // `{` or `,`.
  char last = 0;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (llvm::isSpace(c)) {
      ++i;
      continue;
    }
    if (text.substr(i).starts_with("//")) {
      i = skipTrivia(text, i);
      continue;
    }
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      ++i;
      last = '"';
      continue;
    }
    if (!isIdentifierChar(c)) {
      last = c;
      ++i;
      continue;
    }
    const size_t start = i;
    while (i < text.size() && isIdentifierChar(text[i]))
      ++i;
    const StringRef word = text.slice(start, i);
    if (last == ')' && (word == "dimensions" || word == "permutation")) {
      size_t j = skipTrivia(text, i);
      if (j < text.size() && text[j] == '=' &&
          !isIntegerList(text, skipTrivia(text, j + 1)))
        return start;
    }
    last = word.back();
  }
  return std::nullopt;
}

LogicalResult mlir::shardlin::refuseUpstreamParserCrash(llvm::MemoryBufferRef buffer,
                                                       llvm::raw_ostream &os) {
  std::optional<size_t> at = findUpstreamParserCrash(buffer.getBuffer());
  if (!at)
    return success();
  const char *where = buffer.getBufferStart() + *at;
  StringRef keyword = StringRef(where).take_while(isIdentifierChar);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(buffer, /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  sourceMgr.PrintMessage(
      os, llvm::SMLoc::getFromPointer(where), llvm::SourceMgr::DK_Error,
      "'" + keyword + " =' is not followed by an integer list such as [0, 1]; "
      "refused before parsing, because MLIR 22's parser of linalg.broadcast, "
      "linalg.reduce and linalg.transpose crashes on it");
  return failure();
}
