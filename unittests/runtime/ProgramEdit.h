//===- ProgramEdit.h - A program text with one edit, parsed -----*- C++ -*-===//
//
// The program tests' negative cases: a valid "shardlin-program v1" text
// with one piece replaced, then parsed, so that each case names only what
// it breaks.
//
//===----------------------------------------------------------------------===//
#ifndef SHARDLIN_RUNTIME_TEST_PROGRAMEDIT_H
#define SHARDLIN_RUNTIME_TEST_PROGRAMEDIT_H

#include "shardlin/runtime/program/ProgramText.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace shardlin::rt::testutil {

/// Parses `text` with its first `from` replaced by `to` into `out`; a test
/// failure if `text` has no `from`.
inline Status parseEdited(std::string text, const std::string &from,
                          const std::string &to, Program &out) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return parseProgram(text, out);
}

/// The same, the program thrown away.
inline Status parseEdited(const std::string &text, const std::string &from,
                          const std::string &to) {
  Program p;
  return parseEdited(text, from, to, p);
}

/// An edit the parser or the validation must refuse, with the message.
struct RefusedEdit {
  const char *from, *to, *message;
};

/// Expects each edit of `text` to be refused with its message.
inline void expectRefused(const std::string &text,
                          std::initializer_list<RefusedEdit> edits) {
  for (const RefusedEdit &e : edits)
    EXPECT_EQ(parseEdited(text, e.from, e.to).message(), e.message)
        << "'" << e.from << "' edited into '" << e.to << "'";
}

} // namespace shardlin::rt::testutil

#endif // SHARDLIN_RUNTIME_TEST_PROGRAMEDIT_H
