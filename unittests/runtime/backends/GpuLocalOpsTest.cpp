//===- GpuLocalOpsTest.cpp - GPU memory, local ops and plans --------------===//
//
// Streams and device memory, the CUDA local ops (copyRows, biasAdd,
// convert, sumRows; elementwise in GpuElementwiseTest.cpp) checked against
// the host's LocalOps, and plans run on device memory with cuBLAS, the CUDA
// local ops and cuda-local. Every test skips without a device.
//
//===----------------------------------------------------------------------===//

#include "ExprTestSupport.h"
#include "GpuTestSupport.h"

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/program/ProgramText.h"
#include "shardlin/runtime/exec/LocalOps.h"
#include "shardlin/runtime/exec/Plan.h"
#include "shardlin/runtime/program/Program.h"
#include "shardlin/runtime/tooling/Runner.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace shardlin::rt;
using namespace shardlin::rt::testing;

//===----------------------------------------------------------------------===//
// GPU: streams, memory
//===----------------------------------------------------------------------===//

TEST(GpuMemory, StreamAllocatorAndCopies) {
  REQUIRE_CUDA_DEVICE();
  std::shared_ptr<ExecutionStream> stream;
  Status st = ExecutionStream::create(0, stream);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(stream->device(), 0);
  EXPECT_NE(stream->nativeHandle(), nullptr);

  std::unique_ptr<Allocator> alloc;
  st = createCudaAllocator(0, alloc);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(alloc->device(), (Device{DeviceKind::Cuda, 0}));

  Buffer buf;
  st = Buffer::allocate(*alloc, 1000, buf);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(deviceName(buf.device()), "cuda:0");
  std::vector<unsigned char> in(1000), out(1000, 0);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = static_cast<unsigned char>(i * 7 + 3);
  ASSERT_TRUE(copyToDevice(*stream, buf.data(), in.data(), 1000).isOk());
  ASSERT_TRUE(copyToHost(*stream, out.data(), buf.data(), 1000).isOk());
  EXPECT_EQ(in, out);
  EXPECT_TRUE(stream->synchronize().isOk());

  // No device has 2^62 bytes: the failure names the call and the size.
  void *p = reinterpret_cast<void *>(uintptr_t(1));
  st = alloc->allocate(size_t(1) << 62, &p);
  ASSERT_FALSE(st.isOk());
  EXPECT_TRUE(contains(st.message(), "cudaMalloc")) << st.message();
  EXPECT_TRUE(contains(st.message(), "4611686018427387904 bytes"))
      << st.message();
  EXPECT_EQ(p, nullptr);

  const int n = deviceCount();
  std::shared_ptr<ExecutionStream> none;
  st = ExecutionStream::create(n, none);
  ASSERT_FALSE(st.isOk());
  EXPECT_TRUE(contains(st.message(), "does not exist")) << st.message();
}

//===----------------------------------------------------------------------===//
// GPU: local ops (copyRows, biasAdd, convert, sumRows, reduceLast), checked
// against the host's LocalOps
//===----------------------------------------------------------------------===//

namespace {

Bytes randomBytes(std::mt19937_64 &rng, size_t n) {
  Bytes b(n);
  for (auto &c : b)
    c = static_cast<unsigned char>(rng());
  return b;
}

} // namespace

TEST_F(CudaLocalOpsTest, Device) {
  EXPECT_EQ(ops_->device(), (Device{DeviceKind::Cuda, 0}));
}

// Every layout a plan makes (packing and unpacking strided pieces, a
// contiguous block, one row) and the edge cases: the device copy must equal
// the host's on the whole destination, untouched bytes included.
TEST_F(CudaLocalOpsTest, CopyRowsMatchesHost) {
  struct Case {
    int64_t rows;
    size_t rowBytes, srcStride, dstStride;
  };
  const Case cases[] = {
      {5, 20, 76, 20},   // pack: 5 rows of a 19-wide f32 matrix, 5 columns
      {5, 20, 20, 76},   // unpack
      {7, 12, 40, 28},   // strided on both sides
      {20, 44, 44, 44},  // contiguous rows: one linear copy
      {1, 300, 0, 0},    // one row: the strides do not matter
      {0, 16, 16, 16},   // nothing to copy
      {3, 0, 8, 8},      // empty rows
      {1031, 6, 10, 14}, // many short rows
      {3, 4096, 8192, 4096},
  };
  auto hostOps = createHostLocalOps();
  std::mt19937_64 rng(11);
  for (const Case &c : cases) {
    SCOPED_TRACE("rows=" + std::to_string(c.rows) +
                 " rowBytes=" + std::to_string(c.rowBytes) + " strides " +
                 std::to_string(c.srcStride) + " -> " +
                 std::to_string(c.dstStride));
    const size_t srcBytes =
        c.rows == 0 ? 1 : size_t(c.rows - 1) * c.srcStride + c.rowBytes + 8;
    const size_t dstBytes =
        c.rows == 0 ? 1 : size_t(c.rows - 1) * c.dstStride + c.rowBytes + 8;
    Bytes src = randomBytes(rng, srcBytes);
    Bytes want(dstBytes, kPoisonByte);
    ASSERT_TRUE(hostOps
                    ->copyRows(src.data(), c.srcStride, want.data(),
                               c.dstStride, c.rows, c.rowBytes)
                    .isOk());
    Buffer dsrc, ddst;
    ASSERT_TRUE(upload(src, dsrc).isOk());
    ASSERT_TRUE(upload(Bytes(dstBytes, kPoisonByte), ddst).isOk());
    Status st = ops_->copyRows(dsrc.data(), c.srcStride, ddst.data(),
                               c.dstStride, c.rows, c.rowBytes);
    ASSERT_TRUE(st.isOk()) << st.message();
    Bytes got;
    ASSERT_TRUE(download(ddst, got).isOk());
    EXPECT_EQ(got, want);
  }
}

// biasAdd rounds like the host (f16/bf16 in f32, once), so the results are
// the same bits; in place and out of place, rows of any length.
TEST_F(CudaLocalOpsTest, BiasAddMatchesHostBitForBit) {
  auto hostOps = createHostLocalOps();
  const std::pair<int64_t, int64_t> shapes[] = {
      {1, 1}, {7, 13}, {5, 11}, {300, 1031}, {70000, 3}, {2, 70001}};
  for (DType t : kAllDTypes)
    for (auto [rows, cols] : shapes)
      for (bool inPlace : {false, true}) {
        SCOPED_TRACE(std::string(dtypeName(t)) + " " + std::to_string(rows) +
                     " x " + std::to_string(cols) +
                     (inPlace ? " in place" : ""));
        const size_t es = dtypeSize(t);
        std::mt19937_64 rng(rows * 31 + cols);
        Bytes x(size_t(rows * cols) * es), bias(size_t(cols) * es);
        fillRandomForSums(t, x.data(), rows * cols, rng);
        fillRandomForSums(t, bias.data(), cols, rng);
        Bytes want(x.size(), kPoisonByte);
        ASSERT_TRUE(
            hostOps->biasAdd(x.data(), bias.data(), want.data(), rows, cols, t)
                .isOk());
        Buffer dx, dbias, dy;
        ASSERT_TRUE(upload(x, dx).isOk());
        ASSERT_TRUE(upload(bias, dbias).isOk());
        // Two poisoned elements past the end show a write beyond it.
        ASSERT_TRUE(upload(Bytes(x.size() + 2 * es, kPoisonByte), dy).isOk());
        void *y = inPlace ? dx.data() : dy.data();
        Status st = ops_->biasAdd(dx.data(), dbias.data(), y, rows, cols, t);
        ASSERT_TRUE(st.isOk()) << st.message();
        Bytes got;
        ASSERT_TRUE(download(inPlace ? dx : dy, got).isOk());
        ASSERT_GE(got.size(), want.size());
        EXPECT_TRUE(sameBytes(got.data(), want.data(), want.size()));
        if (!inPlace) {
          EXPECT_TRUE(isPoison(got.data() + want.size(), 2 * es));
        }
        if (HasFailure())
          return;
      }
}

// convert rounds like the host (f32 to f16/bf16 to nearest even, back
// exactly), so the results are the same bits, for sizes around the grid's.
TEST_F(CudaLocalOpsTest, ConvertMatchesHostBitForBit) {
  auto hostOps = createHostLocalOps();
  const std::pair<DType, DType> pairs[] = {{DType::F32, DType::F16},
                                           {DType::F32, DType::BF16},
                                           {DType::F16, DType::F32},
                                           {DType::BF16, DType::F32}};
  for (auto [from, to] : pairs)
    for (int64_t n : {int64_t(1), int64_t(1031), int64_t(2000003)}) {
      SCOPED_TRACE(std::string(dtypeName(from)) + " to " + dtypeName(to) +
                   ", " + std::to_string(n));
      std::mt19937_64 rng(n);
      Bytes x(size_t(n) * dtypeSize(from));
      fillRandomForSums(from, x.data(), n, rng);
      Bytes want(size_t(n) * dtypeSize(to), kPoisonByte);
      ASSERT_TRUE(hostOps->convert(x.data(), from, want.data(), to, n).isOk());
      Buffer dx, dy;
      ASSERT_TRUE(upload(x, dx).isOk());
      // Two poisoned elements past the end show a write beyond it.
      ASSERT_TRUE(
          upload(Bytes(want.size() + 2 * dtypeSize(to), kPoisonByte), dy).isOk());
      Status st = ops_->convert(dx.data(), from, dy.data(), to, n);
      ASSERT_TRUE(st.isOk()) << st.message();
      Bytes got;
      ASSERT_TRUE(download(dy, got).isOk());
      EXPECT_TRUE(sameBytes(got.data(), want.data(), want.size()));
      EXPECT_TRUE(isPoison(got.data() + want.size(), 2 * dtypeSize(to)));
      if (HasFailure())
        return;
    }
  Status st = ops_->convert(nullptr, DType::F32, nullptr, DType::F64, 1);
  EXPECT_NE(st.message().find("no conversion"), std::string::npos)
      << st.message();
}

// sumRows adds each column's rows in the host's order, so the sums are the
// same bits (every pair of types; 0 rows give zeros).
TEST_F(CudaLocalOpsTest, SumRowsMatchesHostBitForBit) {
  auto hostOps = createHostLocalOps();
  const std::pair<DType, DType> pairs[] = {
      {DType::F64, DType::F64}, {DType::F32, DType::F32},
      {DType::F16, DType::F16}, {DType::F16, DType::F32},
      {DType::BF16, DType::BF16}, {DType::BF16, DType::F32}};
  for (auto [from, to] : pairs)
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{0, 5}, {1, 1},
                              {37, 1031}, {4099, 3}}) {
      SCOPED_TRACE(std::string(dtypeName(from)) + " to " + dtypeName(to) +
                   ", " + std::to_string(rows) + " x " + std::to_string(cols));
      std::mt19937_64 rng(rows * 7 + cols);
      Bytes x(size_t(std::max<int64_t>(rows * cols, 1)) * dtypeSize(from));
      fillRandomForSums(from, x.data(), rows * cols, rng);
      Bytes want(size_t(cols) * dtypeSize(to), kPoisonByte);
      ASSERT_TRUE(hostOps->sumRows(x.data(), from, want.data(), to, rows, cols)
                      .isOk());
      Buffer dx, dy;
      ASSERT_TRUE(upload(x, dx).isOk());
      ASSERT_TRUE(upload(Bytes(want.size() + dtypeSize(to), kPoisonByte), dy)
                      .isOk());
      Status st = ops_->sumRows(dx.data(), from, dy.data(), to, rows, cols);
      ASSERT_TRUE(st.isOk()) << st.message();
      Bytes got;
      ASSERT_TRUE(download(dy, got).isOk());
      EXPECT_TRUE(sameBytes(got.data(), want.data(), want.size()));
      EXPECT_TRUE(isPoison(got.data() + want.size(), dtypeSize(to)));
      if (HasFailure())
        return;
    }
}

// reduceLast combines each row in the host's order from its init, so the
// results are the same bits (every type; sum, maximum, maxnum; 0 columns
// give the init, 0 rows nothing).
TEST_F(CudaLocalOpsTest, ReduceLastMatchesHostBitForBit) {
  auto hostOps = createHostLocalOps();
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16})
    for (ExprOp op : {ExprOp::Add, ExprOp::Maximum, ExprOp::MaxNum})
      for (auto [rows, cols] : {std::pair<int64_t, int64_t>{0, 5}, {3, 0},
                                {1, 1}, {37, 1031}, {4099, 3}}) {
        SCOPED_TRACE(std::string(dtypeName(t)) + " " + exprOpName(op) + ", " +
                     std::to_string(rows) + " x " + std::to_string(cols));
        std::mt19937_64 rng(rows * 7 + cols);
        Bytes x(size_t(std::max<int64_t>(rows * cols, 1)) * dtypeSize(t));
        fillRandomForSums(t, x.data(), rows * cols, rng);
        Bytes init(size_t(std::max<int64_t>(rows, 1)) * dtypeSize(t));
        fillRandomForSums(t, init.data(), rows, rng);
        Bytes want(size_t(rows) * dtypeSize(t), kPoisonByte);
        ASSERT_TRUE(hostOps
                        ->reduceLast(op, x.data(), init.data(), want.data(),
                                     rows, cols, t)
                        .isOk());
        Buffer dx, dinit, dy;
        ASSERT_TRUE(upload(x, dx).isOk());
        ASSERT_TRUE(upload(init, dinit).isOk());
        ASSERT_TRUE(upload(Bytes(want.size() + dtypeSize(t), kPoisonByte), dy)
                        .isOk());
        Status st = ops_->reduceLast(op, dx.data(), dinit.data(), dy.data(),
                                     rows, cols, t);
        ASSERT_TRUE(st.isOk()) << st.message();
        Bytes got;
        ASSERT_TRUE(download(dy, got).isOk());
        EXPECT_TRUE(sameBytes(got.data(), want.data(), want.size()));
        EXPECT_TRUE(isPoison(got.data() + want.size(), dtypeSize(t)));
        if (HasFailure())
          return;
      }
}

// Both ops only enqueue: a copy of a bias add's output, then a bias add on
// the copy, with no synchronization in between, see each other's results.
TEST_F(CudaLocalOpsTest, OrderedOnTheStreamWithoutWaiting) {
  const int64_t rows = 512, cols = 4096;
  std::vector<float> x(size_t(rows * cols), 1.0f), bias(size_t(cols), 2.0f);
  Bytes xb(x.size() * 4), bb(bias.size() * 4);
  copyBytes(xb.data(), x.data(), xb.size());
  copyBytes(bb.data(), bias.data(), bb.size());
  Buffer dx, dbias, dy;
  ASSERT_TRUE(upload(xb, dx).isOk());
  ASSERT_TRUE(upload(bb, dbias).isOk());
  ASSERT_TRUE(upload(Bytes(xb.size(), 0), dy).isOk());
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(ops_->biasAdd(dx.data(), dbias.data(), dx.data(), rows, cols,
                              DType::F32)
                    .isOk());
    ASSERT_TRUE(ops_->copyRows(dx.data(), size_t(cols) * 4, dy.data(),
                               size_t(cols) * 4, rows, size_t(cols) * 4)
                    .isOk());
    ASSERT_TRUE(ops_->copyRows(dy.data(), size_t(cols) * 4, dx.data(),
                               size_t(cols) * 4, rows, size_t(cols) * 4)
                    .isOk());
  }
  Bytes got;
  ASSERT_TRUE(download(dx, got).isOk());
  std::vector<float> y(x.size());
  copyBytes(y.data(), got.data(), got.size());
  for (size_t i = 0; i < y.size(); ++i)
    if (y[i] != 9.0f) {
      ADD_FAILURE() << "element " << i << " = " << y[i] << ", expected 9";
      break;
    }
}

TEST_F(CudaLocalOpsTest, RejectsBadArguments) {
  Buffer d;
  ASSERT_TRUE(upload(Bytes(64, 0), d).isOk());
  auto expectError = [](const Status &st, const std::string &needle) {
    ASSERT_FALSE(st.isOk()) << "expected an error mentioning " << needle;
    EXPECT_TRUE(contains(st.message(), needle)) << st.message();
  };
  char *p = static_cast<char *>(d.data());
  expectError(ops_->copyRows(p, 8, p + 32, 8, -1, 8), "negative row count");
  expectError(ops_->copyRows(nullptr, 8, p, 8, 2, 8), "src is null");
  expectError(ops_->copyRows(p, 4, p + 32, 8, 2, 8),
              "a stride is smaller than the row length");
  expectError(ops_->biasAdd(p, p, p, -1, 2, DType::F32), "negative size");
  expectError(ops_->biasAdd(p, p, p, 1, 2, static_cast<DType>(9)),
              "invalid dtype");
  expectError(ops_->biasAdd(p + 2, p, p + 2, 1, 2, DType::F32),
              "x is not aligned");
  expectError(ops_->biasAdd(p, p, nullptr, 1, 2, DType::F32), "y is null");
  bool pageable = false;
  ASSERT_TRUE(cuda::pageableMemoryAccess(0, pageable).isOk());
  std::vector<float> host(2, 0.0f);
  if (!pageable)
    expectError(ops_->biasAdd(p, host.data(), p, 1, 2, DType::F32),
                "bias is host memory");
  Builder b;
  b.op(ExprOp::Exp, b.input(0));
  expectError(ops_->elementwise(b.p, {{p}}, p, -1, 2, DType::F32),
              "negative size");
  expectError(ops_->elementwise(b.p, {{nullptr}}, p, 1, 2, DType::F32),
              "operand 0 is null");
  expectError(ops_->elementwise(b.p, {}, p, 1, 2, DType::F32),
              "reads operand 0 but the op has 0 operands");
  expectError(ops_->elementwise(b.p, {{p + 2}}, p, 1, 2, DType::F32),
              "operand 0 is not aligned");
  if (!pageable)
    expectError(ops_->elementwise(b.p, {{host.data()}}, p, 1, 2, DType::F32),
                "operand 0 is host memory");
  // Still usable, and nothing needs waiting for afterwards.
  EXPECT_TRUE(ops_->biasAdd(p, p + 16, p + 32, 2, 2, DType::F32).isOk());
  EXPECT_TRUE(ops_->elementwise(b.p, {{p}}, p + 32, 2, 2, DType::F32).isOk());
  EXPECT_TRUE(stream_->synchronize().isOk());
}

//===----------------------------------------------------------------------===//
// GPU: plans on device memory (runtime only, no compiler: the programs are
// the text form `shardlin-run --emit-program --strategy=activations` wrote
// for test/shardlin-run/Inputs/{row,col}-uneven-bias.mlir)
//===----------------------------------------------------------------------===//

namespace {

/// Row-wise, W = 4, weight 11 x 19 split along K, placements [2, 3, 0, 1]:
/// a staged all_to_all (packing strided pieces), the GEMM, a reduce_scatter
/// and an in-place bias_add. @T@ is the element type.
const char *const kRowProgram = R"(shardlin-program v1
name main
world_size 4
values 8
value 0 @T@ 2 5 19
value 1 @T@ 2 11 ?
value 2 @T@ 1 11
value 3 @T@ 2 11 ?
value 4 @T@ 2 20 ?
value 5 @T@ 2 20 11
value 6 @T@ 2 5 11
value 7 @T@ 2 5 11
arg 0 plain
arg 1 sharded 2 11 19 spec 1 4 2 3 0 1
arg 2 plain
instr local_shard result 3 operands 1 1
instr all_to_all result 4 operands 1 0 chunk 1 4 2 3 0 1 concat 0 4 0 1 2 3
instr gemm result 5 operands 2 4 3 trans 0 1
instr reduce_scatter result 6 operands 1 5 chunk 0 4 0 1 2 3
instr bias_add result 7 operands 2 6 2
results 1 7
end
)";

/// Col-wise, W = 4, weight split along N, placements [3, 0, 2, 1]: an
/// all_gather, a local_chunk of the bias, the GEMM with the bias fused and an
/// all_to_all whose received pieces are unpacked (strided).
const char *const kColProgram = R"(shardlin-program v1
name main
world_size 4
values 8
value 0 @T@ 2 5 19
value 1 @T@ 2 ? 19
value 2 @T@ 1 11
value 3 @T@ 2 ? 19
value 4 @T@ 2 20 19
value 5 @T@ 1 ?
value 6 @T@ 2 20 ?
value 7 @T@ 2 5 11
arg 0 plain
arg 1 sharded 2 11 19 spec 0 4 3 0 2 1
arg 2 plain
instr local_shard result 3 operands 1 1
instr all_gather result 4 operands 1 0 chunk 0 4 0 1 2 3
instr local_chunk result 5 operands 1 2 chunk 0 4 3 0 2 1
instr gemm result 6 operands 3 4 3 5 trans 0 1
instr all_to_all result 7 operands 1 6 chunk 0 4 0 1 2 3 concat 1 4 3 0 2 1
results 1 7
end
)";

std::string programText(const char *text, DType t) {
  std::string s = text;
  for (size_t at = s.find("@T@"); at != std::string::npos;
       at = s.find("@T@", at))
    s.replace(at, 3, dtypeName(t));
  return s;
}

/// Values in +-[0.25, 1], rounded to t: `bytes` and the exact `values`.
void randomOperand(DType t, size_t n, std::mt19937_64 &rng, Bytes &bytes,
                   std::vector<double> &values) {
  std::uniform_real_distribution<double> mag(0.25, 1.0);
  values.resize(n);
  for (double &v : values)
    v = (rng() & 1 ? -1 : 1) * mag(rng);
  bytes.assign(n * dtypeSize(t), 0);
  convertFromF64(t, values.data(), bytes.data(), n);
  convertToF64(t, bytes.data(), values.data(), n);
}

/// The end-to-end suite's bound (integration_test/EndToEnd/E2ESupport.cpp).
double planBound(DType t, int w) {
  switch (t) {
  case DType::F64:
    return 1e-12;
  case DType::F32:
    return 1e-5;
  case DType::F16:
    return (w + 2) * std::ldexp(1.0, -11);
  case DType::BF16:
    return (w + 2) * std::ldexp(1.0, -8);
  }
  return 0;
}

} // namespace

// The Plan does nothing on the host with device memory: built on the CUDA
// allocator and run with cuBLAS, the CUDA local ops and cuda-local on device
// pointers, every rank's output matches the float64 reference. Replayed
// with new inputs (compile once, run many).
TEST(GpuPlan, RowAndColProgramsOnCudaLocal) {
  REQUIRE_CUDA_DEVICE();
  const int w = 4;
  const int64_t rows = 5, n = 11, k = 19;
  for (const char *text : {kRowProgram, kColProgram})
    for (DType t : kAllDTypes) {
      const bool row = text == kRowProgram;
      SCOPED_TRACE(std::string(row ? "row" : "col") + " " + dtypeName(t));
      Program program;
      Status st = parseProgram(programText(text, t), program);
      ASSERT_TRUE(st.isOk()) << st.message();
      Ranks ranks;
      st = makeCudaLocalRanks(
          w,
          [] {
            CommOptions o;
            o.timeoutSeconds = 60;
            return o;
          }(),
          ranks);
      ASSERT_TRUE(st.isOk()) << st.message();
      const size_t es = dtypeSize(t);
      auto failures = onEveryRank(ranks, [&](int r, Rank &rank, Failures &f) {
        std::unique_ptr<Plan> plan;
        std::unique_ptr<GemmBackend> gemm;
        std::unique_ptr<LocalOps> ops;
        Status s = Plan::build(program, r, w, *rank.alloc, plan);
        if (s.isOk())
          s = createCublasGemm(rank.stream, GemmOptions(), gemm);
        if (s.isOk())
          s = createCudaLocalOps(rank.stream, ops);
        if (!s.isOk())
          return f.add(s.message());
        for (uint64_t replay = 0; replay < 2; ++replay) {
          // The same weight and bias on every rank (seeded by replay only),
          // a distinct x per rank.
          std::mt19937_64 shared(1000 + replay), own(2000 + 10 * replay + r);
          Bytes wb, bb, xb, chunk;
          std::vector<double> wv, bv, xv;
          randomOperand(t, size_t(n * k), shared, wb, wv);
          randomOperand(t, size_t(n), shared, bb, bv);
          randomOperand(t, size_t(rows * k), own, xb, xv);
          std::vector<uint8_t> chunkBytes;
          extractLocalChunk(wb.data(), {n, k}, t, program.args[1].sharding, r,
                            chunkBytes);
          chunk.assign(chunkBytes.begin(), chunkBytes.end());
          Buffer dx, dw, db, dy;
          s = toDevice(rank, xb, dx);
          if (s.isOk())
            s = toDevice(rank, chunk, dw);
          if (s.isOk())
            s = toDevice(rank, bb, db);
          if (s.isOk())
            s = toDevice(rank, Bytes(size_t(rows * n) * es, kPoisonByte), dy);
          if (s.isOk())
            s = plan->run(*rank.comm, *gemm, *ops,
                          {dx.data(), dw.data(), db.data()}, {dy.data()});
          Bytes got;
          if (s.isOk())
            s = toHost(rank, dy, got);
          if (!s.isOk())
            return f.add("replay " + std::to_string(replay) + ": " +
                         s.message());
          std::vector<double> y(size_t(rows * n));
          convertToF64(t, got.data(), y.data(), y.size());
          const double bound = planBound(t, w);
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double ref = bv[j], scale = std::fabs(bv[j]);
              for (int64_t p = 0; p < k; ++p) {
                ref += xv[i * k + p] * wv[j * k + p];
                scale += std::fabs(xv[i * k + p] * wv[j * k + p]);
              }
              const double err = std::fabs(y[i * n + j] - ref) / scale;
              if (!(err <= bound)) {
                f.add("replay " + std::to_string(replay) + ": y[" +
                      std::to_string(i) + "][" + std::to_string(j) +
                      "] = " + std::to_string(y[i * n + j]) + ", reference " +
                      std::to_string(ref));
                return;
              }
            }
        }
      });
      EXPECT_TRUE(failures.empty()) << join(failures);
    }
}

// A plan on device memory refuses host local ops (and the reverse): one
// device for the communicator, the GEMM and the local ops.
TEST(GpuPlan, MixedDevicesAreRefused) {
  REQUIRE_CUDA_DEVICE();
  Program program;
  ASSERT_TRUE(
      parseProgram(programText(kRowProgram, DType::F32), program).isOk());
  Ranks ranks;
  ASSERT_TRUE(makeCudaLocalRanks(4, CommOptions(), ranks).isOk());
  std::unique_ptr<Plan> plan;
  ASSERT_TRUE(Plan::build(program, 0, 4, *ranks[0].alloc, plan).isOk());
  std::unique_ptr<GemmBackend> gemm;
  ASSERT_TRUE(createCublasGemm(ranks[0].stream, GemmOptions(), gemm).isOk());
  std::unique_ptr<LocalOps> hostOps = createHostLocalOps();
  Status st = plan->run(*ranks[0].comm, *gemm, *hostOps,
                        {nullptr, nullptr, nullptr}, {nullptr});
  EXPECT_TRUE(contains(st.message(), "must be on one device")) << st.message();
  EXPECT_TRUE(contains(st.message(), "local ops (host)")) << st.message();
}
