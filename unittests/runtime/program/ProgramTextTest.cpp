//===- ProgramTextTest.cpp - The "shardlin-program v1" text form ----------===//

#include "shardlin/runtime/program/ProgramText.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

namespace rt = shardlin::rt;

namespace {

// A row-wise layer over two ranks, as shardlin-run --emit-program writes it.
const char *kRowW2 = R"(shardlin-program v1
name main
world_size 2
values 7
value 0 f32 2 3 4
value 1 f32 2 5 ?
value 2 f32 1 5
value 3 f32 2 5 ?
value 4 f32 2 6 ?
value 5 f32 2 6 5
value 6 f32 2 3 5
arg 0 plain
arg 1 sharded 2 5 4 spec 1 2 1 0
arg 2 plain
instr local_shard result 3 operands 1 1 loc row.mlir:5:8
instr all_to_all result 4 operands 1 0 chunk 1 2 1 0 concat 0 2 0 1 loc row.mlir:5:8
instr gemm result 5 operands 2 4 3 trans 0 1 loc row.mlir:5:8
instr reduce_scatter result 6 operands 1 5 chunk 0 2 0 1 loc row.mlir:5:8
results 1 6
end
)";

std::string withCrlf(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '\n')
      out += '\r';
    out += c;
  }
  return out;
}

/// An edit of a valid program text (`from` replaced by `to`) and the error
/// parseProgram must give for it.
struct BadEdit {
  std::string from, to, message;
};

void expectInvalid(const std::string &text,
                   std::initializer_list<BadEdit> edits) {
  for (const BadEdit &e : edits) {
    std::string bad = text;
    bad.replace(bad.find(e.from), e.from.size(), e.to);
    rt::Program p;
    rt::Status s = rt::parseProgram(bad, p);
    ASSERT_FALSE(s.isOk()) << bad;
    EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
    EXPECT_EQ(s.message(), e.message);
  }
}

TEST(ProgramText, RoundTripsByteIdentical) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kRowW2, p);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(rt::serializeProgram(p), kRowW2);
}

TEST(ProgramText, FieldsSayWhatTheyAre) {
  rt::Program p;
  ASSERT_TRUE(rt::parseProgram(kRowW2, p).isOk());
  ASSERT_EQ(p.instrs.size(), 4u);
  const rt::Instr &a2a = p.instrs[1];
  EXPECT_EQ(a2a.op, rt::OpCode::AllToAll);
  EXPECT_EQ(a2a.split.dim, 1);
  EXPECT_EQ(a2a.split.placements, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(a2a.concat.dim, 0);
  const rt::Instr &rs = p.instrs[3];
  EXPECT_EQ(rs.op, rt::OpCode::ReduceScatter);
  EXPECT_EQ(rs.along.dim, 0);
  EXPECT_EQ(rs.along.placements, (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(p.instrs[2].transposeRhs);
  EXPECT_FALSE(p.instrs[2].transposeLhs);
}

TEST(ProgramText, AcceptsCrlfLineEndings) {
  rt::Program lf, crlf;
  ASSERT_TRUE(rt::parseProgram(kRowW2, lf).isOk());
  rt::Status s = rt::parseProgram(withCrlf(kRowW2), crlf);
  ASSERT_TRUE(s.isOk()) << s.message();
  // Nothing of the '\r' is left in names or locations: the program prints
  // as the LF one does.
  EXPECT_EQ(crlf.name, "main");
  EXPECT_EQ(crlf.instrs[0].location, "row.mlir:5:8");
  EXPECT_EQ(rt::serializeProgram(crlf), rt::serializeProgram(lf));
}

// A location followed by white space and several '\r's (found by the
// program fuzzer: the text it printed did not read back the same) reads as
// the location alone, and the program prints as the plain one does.
TEST(ProgramText, TrailingWhiteSpaceAfterALocationIsNotPartOfIt) {
  rt::Program plain, padded;
  ASSERT_TRUE(rt::parseProgram(kRowW2, plain).isOk());
  std::string text = kRowW2;
  const std::string loc = "loc row.mlir:5:8\n";
  text.replace(text.find(loc), loc.size(), "loc row.mlir:5:8 \t\r\r\r\n");
  rt::Status s = rt::parseProgram(text, padded);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(padded.instrs[0].location, "row.mlir:5:8");
  EXPECT_EQ(rt::serializeProgram(padded), rt::serializeProgram(plain));
}

TEST(ProgramText, ErrorsAreInvalidArgument) {
  rt::Program p;
  rt::Status s = rt::parseProgram("garbage\n", p);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "not a shardlin program (expected the header "
                         "'shardlin-program v1')");
  std::string bad = kRowW2;
  bad.replace(bad.find("instr gemm"), 10, "instr gemv");
  s = rt::parseProgram(bad, p);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument);
  EXPECT_EQ(s.message(), "program line 17: unknown instruction 'gemv'");
}

// Explicit chunk bounds (issue 29: upstream's sharded_dims_offsets, an
// empty chunk here) after a spec's placements, and the ops of imported
// modules: all_reduce, from_local, transpose (`perm`), fill (an expression
// of constants alone).
const char *kBoundsW3 = R"(shardlin-program v1
name main
world_size 3
values 9
value 0 f32 2 4 7
value 1 f32 2 ? 7
value 2 f32 2 ? 7
value 3 f32 2 5 7
value 4 f32 2 4 5
value 5 f32 2 4 5
value 6 f32 2 5 4
value 7 f32 2 5 4
value 8 f32 2 ? 7
arg 0 plain
arg 1 sharded 2 5 7 spec 0 3 2 0 1 bounds 0 4 4 5
instr local_shard result 2 operands 1 1 loc b.mlir:3:4
instr all_gather result 3 operands 1 2 chunk 0 3 2 0 1 bounds 0 4 4 5 loc b.mlir:4:4
instr gemm result 4 operands 2 0 3 trans 0 1 loc b.mlir:5:4
instr all_reduce result 5 operands 1 4 loc b.mlir:6:4
instr transpose result 6 operands 1 5 perm 2 1 0 loc b.mlir:7:4
instr fill result 7 operands 0 expr 1 const 0x1.8p+0 loc b.mlir:8:4
instr from_local result 8 operands 1 2 chunk 0 3 2 0 1 bounds 0 4 4 5 loc b.mlir:9:4
results 4 5 6 7 8
end
)";

TEST(ProgramText, ChunkBoundsAndImportedOpsRoundTrip) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kBoundsW3, p);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(rt::serializeProgram(p), kBoundsW3);
  EXPECT_EQ(p.args[1].sharding.bounds, (std::vector<int64_t>{0, 4, 4, 5}));
  EXPECT_EQ(p.instrs[1].along.bounds, (std::vector<int64_t>{0, 4, 4, 5}));
  EXPECT_EQ(p.instrs[3].op, rt::OpCode::AllReduce);
  EXPECT_EQ(p.instrs[4].permutation, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(p.instrs[5].op, rt::OpCode::Fill);
  EXPECT_EQ(p.instrs[6].along.bounds, (std::vector<int64_t>{0, 4, 4, 5}));
  // A spec without bounds reads as before they existed (kRowW2), and bad
  // bounds are the validation's error, naming the problem.
  struct Case {
    std::string from, to, message;
  } cases[] = {
      {"spec 0 3 2 0 1 bounds 0 4 4 5", "spec 0 3 2 0 1 bounds 0 4 4 6",
       "argument 1: bounds end at 6 but the dim has 5 elements (dim 0 of [5, "
       "7])"},
      {"chunk 0 3 2 0 1 bounds 0 4 4 5 loc b.mlir:4",
       "chunk 0 3 2 0 1 bounds 0 4 3 5 loc b.mlir:4",
       "bounds must be non-decreasing, but bound 2 (3) is less than bound 1 "
       "(4)"},
      {"bounds 0 4 4 5 loc b.mlir:9", "bounds 0 4 5 loc b.mlir:9",
       "program line 22: bad integer 'loc'"},
      {"perm 2 1 0", "perm 2 1 1", "the permutation is not one of 2 dims"},
  };
  for (const Case &c : cases) {
    std::string text = kBoundsW3;
    ASSERT_NE(text.find(c.from), std::string::npos) << c.from;
    text.replace(text.find(c.from), c.from.size(), c.to);
    rt::Program q;
    s = rt::parseProgram(text, q);
    EXPECT_EQ(s.code(), rt::StatusCode::InvalidArgument) << c.to;
    EXPECT_NE(s.message().find(c.message), std::string::npos)
        << s.message() << "\n  expected: " << c.message;
  }
}

// A sharded result's layout (issue 27.9: the runners write such a result
// whole for a path without {rank}, so the program must say it is sharded):
// a 'result' line after 'results', round-tripped, and checked against the
// result's local shape and the world size.
TEST(ProgramText, ShardedResultLayouts) {
  const std::string text = R"(shardlin-program v1
name main
world_size 2
values 2
value 0 f32 2 ? 3
value 1 f32 2 ? 3
arg 0 sharded 2 5 3 spec 0 2 1 0
instr local_shard result 1 operands 1 0 loc r.mlir:2:3
results 1 1
result 0 sharded 2 5 3 spec 0 2 1 0
end
)";
  rt::Program p;
  rt::Status s = rt::parseProgram(text, p);
  ASSERT_TRUE(s.isOk()) << s.message();
  ASSERT_EQ(p.resultLayouts.size(), 1u);
  EXPECT_TRUE(p.resultLayouts[0].sharded);
  EXPECT_EQ(p.resultLayouts[0].globalShape, (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(p.resultLayouts[0].sharding.placements,
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(rt::serializeProgram(p), text);

  expectInvalid(text, {
      {"result 0 sharded 2 5 3 spec 0 2 1 0", "result 1 sharded 2 5 3 spec 0 2 1 0",
       "program line 10: integer 1 out of range"},
      {"results 1 1\nresult 0", "result 0 sharded 2 5 3 spec 0 2 1 0\nresults 1 1\nresult 0",
       "program line 9: a 'result' line before the 'results' line"},
      {"result 0 sharded 2 5 3 spec 0 2 1 0", "result 0 sharded 2 5 3 spec 0 3 1 0 2",
       "result 0 has 3 chunks but the program runs on 2 ranks"},
      {"result 0 sharded 2 5 3", "result 0 sharded 2 5 4",
       "result 0: its local shape [?, 3] is not a chunk of its global shape [5, 4] along dim 0"},
  });
}

// Replicated arguments (the upstream import's unsplit ones, which the ranks
// check are the same on every rank) and the arguments' locations: both
// round-trip; a program without them reads as before; `replicated` only on
// a plain argument, before `loc`.
const char *kReplicatedW3 = R"(shardlin-program v1
name col
world_size 3
values 4
value 0 f32 2 4 16
value 1 f32 2 12 16
value 2 f32 2 4 ?
value 3 f32 2 4 12
arg 0 plain replicated loc in.mlir:12:25
arg 1 sharded 2 12 16 spec 0 3 0 1 2 loc in.mlir:12:50
instr gemm result 2 operands 2 0 1 trans 0 1 loc in.mlir:20:9
instr all_gather result 3 operands 1 2 chunk 1 3 0 1 2 loc in.mlir:20:9
results 1 3
end
)";

TEST(ProgramText, ReplicatedArgumentsAndLocationsRoundTrip) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kReplicatedW3, p);
  ASSERT_TRUE(s.isOk()) << s.message();
  ASSERT_EQ(p.args.size(), 2u);
  EXPECT_TRUE(p.args[0].replicated);
  EXPECT_FALSE(p.args[0].sharded);
  EXPECT_EQ(p.args[0].location, "in.mlir:12:25");
  EXPECT_FALSE(p.args[1].replicated);
  EXPECT_EQ(p.args[1].location, "in.mlir:12:50");
  EXPECT_EQ(rt::describeArgument(p, 0), "argument 0 (in.mlir:12:25)");
  EXPECT_EQ(rt::serializeProgram(p), kReplicatedW3);

  // Without the words: a rank-local argument with no location.
  std::string plain = kReplicatedW3;
  plain.replace(plain.find(" replicated loc in.mlir:12:25"), 29, "");
  ASSERT_TRUE(rt::parseProgram(plain, p).isOk());
  EXPECT_FALSE(p.args[0].replicated);
  EXPECT_EQ(p.args[0].location, "");
  EXPECT_EQ(rt::describeArgument(p, 0), "argument 0");
  EXPECT_EQ(rt::serializeProgram(p), plain);

  expectInvalid(kReplicatedW3, {
      {"spec 0 3 0 1 2 loc", "spec 0 3 0 1 2 replicated loc",
       "program line 10: unexpected 'replicated' after the argument's spec "
       "(expected 'replicated' for a plain argument, 'param NAME', or "
       "'loc')"},
      {"plain replicated", "plain replicated replicated",
       "program line 9: unexpected 'replicated' after the argument's kind "
       "(expected 'replicated' for a plain argument, 'param NAME', or "
       "'loc')"},
      {"plain replicated", "plain copied",
       "program line 9: unexpected 'copied' after the argument's kind "
       "(expected 'replicated' for a plain argument, 'param NAME', or "
       "'loc')"},
  });

  // A program built in memory: a sharded argument cannot be replicated.
  ASSERT_TRUE(rt::parseProgram(kReplicatedW3, p).isOk());
  p.args[1].replicated = true;
  s = p.validate();
  EXPECT_EQ(s.message(),
            "argument 1 (in.mlir:12:50) is both sharded and replicated: a "
            "replicated argument is a plain one, the same on every rank");
}

// Parameters (arguments that --shardlin-externalize-parameters made, bound
// by name from a safetensors file): `param NAME` after the kind (and after
// `replicated`), before `loc`; it round-trips, and a name is one word.
const char *kParamsW3 = R"(shardlin-program v1
name col
world_size 3
values 4
value 0 f32 2 4 16
value 1 f32 2 12 16
value 2 f32 2 4 ?
value 3 f32 2 4 12
arg 0 plain replicated param embed.weight loc in.mlir:12:25
arg 1 sharded 2 12 16 spec 0 3 0 1 2 param fc1.weight loc in.mlir:12:50
instr gemm result 2 operands 2 0 1 trans 0 1 loc in.mlir:20:9
instr all_gather result 3 operands 1 2 chunk 1 3 0 1 2 loc in.mlir:20:9
results 1 3
end
)";

TEST(ProgramText, ParameterNamesRoundTrip) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kParamsW3, p);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(p.args[0].parameter, "embed.weight");
  EXPECT_TRUE(p.args[0].replicated);
  EXPECT_EQ(p.args[0].location, "in.mlir:12:25");
  EXPECT_EQ(p.args[1].parameter, "fc1.weight");
  EXPECT_EQ(rt::serializeProgram(p), kParamsW3);

  expectInvalid(kParamsW3, {
      {"param fc1.weight loc", "param loc",
       "program line 10: unexpected 'in.mlir:12:50' after the argument's "
       "spec (expected 'replicated' for a plain argument, 'param NAME', or "
       "'loc')"},
      {"param embed.weight loc", "param embed.weight replicated loc",
       "program line 9: unexpected 'replicated' after the argument's kind "
       "(expected 'replicated' for a plain argument, 'param NAME', or "
       "'loc')"},
      {"param fc1.weight loc in.mlir:12:50", "param",
       "program line 10: 'param' needs the parameter's name"},
  });

  // A program built in memory: a name is one word.
  p.args[1].parameter = "fc1 weight";
  s = p.validate();
  EXPECT_EQ(s.message(),
            "the parameter name 'fc1 weight' of argument 1 (in.mlir:12:50) "
            "holds a space or a control character (a parameter name is one "
            "word)");
}

// A part of a fused q/k/v weight: `rows B E` after `param NAME` (rows
// [B, E) of dim 0 of the named tensor); it round-trips, and the rows must
// be as many as the argument's global dim 0.
const char *kParamRowsW3 = R"(shardlin-program v1
name col
world_size 3
values 3
value 0 f32 2 4 16
value 1 f32 2 ? 16
value 2 f32 2 4 ?
arg 0 plain replicated loc in.mlir:12:25
arg 1 sharded 2 12 16 spec 0 3 0 1 2 param c_attn.weight rows 12 24 loc in.mlir:12:50
instr gemm result 2 operands 2 0 1 trans 0 1 loc in.mlir:20:9
results 1 2
end
)";

TEST(ProgramText, ParameterRowsRoundTrip) {
  rt::Program p;
  rt::Status s = rt::parseProgram(kParamRowsW3, p);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(p.args[1].parameter, "c_attn.weight");
  ASSERT_TRUE(p.args[1].hasParameterRows());
  EXPECT_EQ(p.args[1].parameterRows.offset, 12);
  EXPECT_EQ(p.args[1].parameterRows.size, 12);
  EXPECT_FALSE(p.args[0].hasParameterRows());
  EXPECT_EQ(rt::serializeProgram(p), kParamRowsW3);

  expectInvalid(
      kParamRowsW3,
      {
          {"rows 12 24", "rows 12 20",
           "argument 1 (in.mlir:12:50) holds rows [12, 20) of c_attn.weight, "
           "which must be a parameter's rows as many as the argument's dim 0 "
           "([12, 16])"},
          {"rows 12 24", "rows 24 12",
           "program line 9: integer 12 out of range"},
          {"param c_attn.weight rows 12 24", "rows 12 24",
           "program line 9: unexpected 'rows' after the argument's spec "
           "(expected 'replicated' for a plain argument, 'param NAME', or "
           "'loc')"},
      });
}

} // namespace
