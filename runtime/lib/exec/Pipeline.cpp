//===- Pipeline.cpp - A fused block in row chunks, collectives overlapped --===//
//
// A fused block (docs/blocks.md) is all_gather of every rank's rows, GEMMs
// and elementwise ops that act on each row alone, and a reduce_scatter that
// gives each rank its rows of the sum. Row r of every value between the two
// collectives depends only on row r of the gathered input, so the block can
// run on windows of rows: chunk i gathers rows [start_i, end_i) of every
// rank's input, computes on them, and reduce-scatters them into rows
// [start_i, end_i) of each rank's result. Each element is computed by the
// same operations as in the block run whole, and summed over the ranks in
// the same order.
//
// The pipeline: chunk i + 1's all_gather and chunk i - 1's reduce_scatter
// run on the rank's CommLane while chunk i's GEMMs run on the rank itself.
// Inside the block its values hold the chunks one after another (all of
// chunk 0's rows of every rank, then chunk 1's, ...), so that each chunk's
// rows are contiguous for the GEMMs and each collective reads or writes one
// window; nothing outside the block sees that order (findPipelines checks
// that nothing else reads those values).
//
//===----------------------------------------------------------------------===//

#include "exec/OpKernels.h"

#include <algorithm>
#include <numeric>

namespace shardlin::rt {

namespace {


/// Rows [start, start + size) of `rows` split in `chunks` by the ceil rule.
void chunkRows(int64_t rows, int chunks, int i, int64_t &start,
               int64_t &size) {
  const int64_t per = (rows + chunks - 1) / chunks;
  start = std::min<int64_t>(rows, per * i);
  size = std::min<int64_t>(rows, per * (i + 1)) - start;
}

/// Tries to make a pipeline of `chunks` chunks from the all_gather at `g`;
/// "" and `out` if it can, else why not.
std::string makePipeline(const Plan::Impl &plan, size_t g, int rank,
                         int chunks, Pipeline &out) {
  const Program &program = plan.program;
  const Instr &gather = program.instrs[g];
  const PlanStep &gs = plan.steps[g];
  const int x = gather.operands[0];
  if (gather.along.dim != 0 || plan.shapes[gather.result].size() != 2)
    return "it gathers along dim " + std::to_string(gather.along.dim) +
           " of a rank-" + std::to_string(plan.shapes[gather.result].size()) +
           " value, not the rows of a matrix";
  if (gs.recv.staged)
    return "its result is staged";
  const int64_t k = plan.shapes[x][1];
  if (k == 0)
    return "its rows are empty";
  const int w = plan.worldSize;
  // Each rank's rows and where its block starts in the gathered value.
  const size_t ranks = static_cast<size_t>(w);
  std::vector<int64_t> rows(ranks), first(ranks);
  for (int r = 0; r < w; ++r) {
    rows[size_t(r)] = gs.recv.counts[size_t(r)] / k;
    first[size_t(r)] = gs.recv.displs[size_t(r)] / k;
  }
  const int64_t total = plan.shapes[gather.result][0];

  // The block: the values computed from the gathered rows, row by row.
  std::vector<char> inBlock(program.values.size(), 0);
  inBlock[size_t(gather.result)] = 1;
  std::vector<int> members{gather.result};
  size_t end = 0;
  for (size_t s = g + 1; s < program.instrs.size() && end == 0; ++s) {
    const Instr &in = program.instrs[s];
    bool reads = false;
    for (int v : in.operands)
      reads = reads || inBlock[size_t(v)];
    if (!reads) {
      out.prologue.push_back(s);
      continue;
    }
    const std::string op = std::string("shardlin.") + opCodeName(in.op);
    if (in.op == OpCode::ReduceScatter) {
      const PlanStep &rs = plan.steps[s];
      if (in.along.dim != 0 || rs.send.staged)
        return op + " at instruction " + std::to_string(s) +
               " does not reduce the rows";
      const int64_t n = plan.shapes[in.operands[0]][1];
      if (n == 0)
        return op + " at instruction " + std::to_string(s) +
               " reduces empty rows";
      for (int r = 0; r < w; ++r)
        if (rs.send.counts[size_t(r)] != rows[size_t(r)] * n ||
            rs.send.displs[size_t(r)] != first[size_t(r)] * n)
          return op + " at instruction " + std::to_string(s) +
                 " gives rank " + std::to_string(r) +
                 " other rows than the all_gather gathered from it";
      out.reduceRow = n;
      end = s;
      continue;
    }
    if (!executesRows(in.op) ||
        (in.op == OpCode::Gemm && in.transposeLhs))
      return op + " at instruction " + std::to_string(s) +
             " reads the block's rows, but does not act on each row alone";
    // The row-wise operands must be the block's, the others must not.
    const size_t rank = program.values[in.result].shape.size();
    for (size_t k2 = 0; k2 < in.operands.size(); ++k2) {
      const int v = in.operands[k2];
      const bool rowWise =
          in.op == OpCode::Gemm  ? k2 == 0
          : in.op == OpCode::BiasAdd ? k2 == 0
          : in.op == OpCode::Elementwise
              ? !isRowVectorOperand(plan.shapes[v].size(), rank)
              : true;
      if (rowWise && !inBlock[size_t(v)])
        return op + " at instruction " + std::to_string(s) +
               " reads operand " + std::to_string(k2) +
               " row by row beside the block's rows, but it is not "
               "computed from them";
      if (!rowWise && inBlock[size_t(v)])
        return op + " at instruction " + std::to_string(s) +
               " reads the block's rows as operand " + std::to_string(k2) +
               ", which it does not read row by row";
    }
    if (plan.shapes[in.result].size() != 2 ||
        plan.shapes[in.result][0] != total)
      return op + " at instruction " + std::to_string(s) +
             " does not keep the block's rows";
    inBlock[size_t(in.result)] = 1;
    members.push_back(in.result);
    out.body.push_back(s);
  }
  if (end == 0)
    return "no reduce_scatter of its rows ends the block";
  // Nothing outside the block reads its values, and their storage is
  // theirs (a view of one of them at most).
  for (int v : members) {
    int usesInside = 0;
    for (size_t s = g + 1; s <= end; ++s)
      for (int o : program.instrs[s].operands)
        usesInside += o == v;
    if (usesInside != plan.uses[size_t(v)])
      return "value " + std::to_string(v) + " of the block is also read "
             "outside it";
    if (!inBlock[size_t(plan.root[size_t(v)])] || plan.byteOffset[size_t(v)])
      return "value " + std::to_string(v) + " of the block is stored in "
             "another value";
  }

  out.gather = g;
  out.reduce = end;
  out.gatherRow = k;
  // The ranks in the order of their blocks in the gathered value.
  std::vector<int> order(ranks);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return first[size_t(a)] < first[size_t(b)];
  });
  int64_t slab = 0;
  for (int i = 0; i < chunks; ++i) {
    PipelineChunk c;
    c.slabStart = slab;
    c.gatherCounts.assign(ranks, 0);
    c.gatherDispls.assign(ranks, 0);
    c.reduceCounts.assign(ranks, 0);
    c.reduceDispls.assign(ranks, 0);
    int64_t offset = 0;
    for (int r : order) {
      int64_t start = 0, size = 0;
      chunkRows(rows[size_t(r)], chunks, i, start, size);
      if (r == rank) {
        c.ownStart = start;
        c.ownRows = size;
      }
      c.gatherCounts[size_t(r)] = size * k;
      c.gatherDispls[size_t(r)] = (slab + offset) * k;
      c.reduceCounts[size_t(r)] = size * out.reduceRow;
      c.reduceDispls[size_t(r)] = offset * out.reduceRow;
      offset += size;
    }
    c.slabRows = offset;
    slab += offset;
    if (c.slabRows > 0) // Every rank's tables agree: all skip it alike.
      out.chunks.push_back(std::move(c));
  }
  if (out.chunks.size() < 2)
    return "its rows make " + std::to_string(out.chunks.size()) +
           " chunk(s)";
  return {};
}

} // namespace

void Plan::Impl::findPipelines(int rank) {
  pipelines.clear();
  pipelineInfo.clear();
  pipelineOf.assign(program.instrs.size(), -1);
  for (size_t g = 0; g < program.instrs.size(); ++g) {
    const Instr &in = program.instrs[g];
    if (in.op != OpCode::AllGather || pipelineOf[g] >= 0)
      continue;
    const int asked =
        options.overlapChunks >= 0 ? options.overlapChunks : in.overlapChunks;
    if (asked == 0 || (options.overlapChunks >= 0 && asked < 2))
      continue; // Neither the program nor the options ask.
    PipelineInfo info;
    info.instr = g;
    Pipeline p;
    if (asked < 2)
      info.why = "it asks for 1 chunk";
    else if (asked > kMaxOverlapChunks)
      info.why = "more than " + std::to_string(kMaxOverlapChunks) +
                 " chunks were asked for";
    else
      info.why = makePipeline(*this, g, rank, asked, p);
    // A block whose instructions another pipeline already runs.
    for (size_t s = g; info.why.empty() && s <= p.reduce; ++s)
      if (pipelineOf[s] >= 0)
        info.why = "it overlaps another pipelined block";
    if (info.why.empty()) {
      info.chunks = static_cast<int>(p.chunks.size());
      info.end = p.reduce;
      const int index = static_cast<int>(pipelines.size());
      pipelineOf[p.gather] = index;
      pipelineOf[p.reduce] = index;
      for (size_t s : p.prologue)
        pipelineOf[s] = index;
      for (size_t s : p.body)
        pipelineOf[s] = index;
      pipelines.push_back(std::move(p));
    }
    pipelineInfo.push_back(std::move(info));
  }
}

Status Plan::Impl::runPipeline(const Pipeline &p, Communicator &comm,
                               GemmBackend &gemm, LocalOps &ops,
                               CommLane &lane) {
  for (size_t s : p.prologue)
    SHARDLIN_RETURN_IF_ERROR(executeInstr(s, comm, gemm, ops));
  const Instr &gather = program.instrs[p.gather];
  const Instr &reduce = program.instrs[p.reduce];
  const char *x = ptr(gather.operands[0]);
  char *gathered = ptr(gather.result);
  const char *partial = ptr(reduce.operands[0]);
  char *y = ptr(reduce.result);
  const DType gatherType = program.values[gather.result].dtype;
  const DType reduceType = program.values[reduce.result].dtype;
  const int64_t ge = int64_t(dtypeSize(gatherType));
  const int64_t re = int64_t(dtypeSize(reduceType));
  auto where = [&](const Instr &in) {
    return (in.location.empty() ? std::string() : in.location + ": ") +
           "shardlin." + opCodeName(in.op) + " on rank " +
           std::to_string(comm.rank()) + " (pipelined, chunk ";
  };
  auto gatherChunk = [&](size_t i) {
    const PipelineChunk &c = p.chunks[i];
    return lane.submit([&, i, &c = c](Communicator &on) {
      Status st = on.allGatherV(x + c.ownStart * p.gatherRow * ge,
                                c.ownRows * p.gatherRow, gathered,
                                c.gatherCounts, c.gatherDispls, gatherType);
      return st ? st
                : st.withContext(where(gather) + std::to_string(i) + ")");
    });
  };
  auto reduceChunk = [&](size_t i) {
    const PipelineChunk &c = p.chunks[i];
    return lane.submit([&, i, &c = c](Communicator &on) {
      Status st = on.reduceScatterV(
          partial + c.slabStart * p.reduceRow * re, c.reduceCounts,
          c.reduceDispls, y + c.ownStart * p.reduceRow * re, reduceType);
      return st ? st
                : st.withContext(where(reduce) + std::to_string(i) + ")");
    });
  };

  const size_t n = p.chunks.size();
  // Two collectives a chunk, and the failed one a GEMM's failure enters.
  SHARDLIN_RETURN_IF_ERROR(lane.begin(2 * n + 1));
  std::vector<size_t> gathers(n);
  gathers[0] = gatherChunk(0);
  Status failed = Status::ok();
  for (size_t i = 0; i < n && failed; ++i) {
    failed = lane.wait(gathers[i]);
    if (!failed)
      break;
    if (i + 1 < n)
      gathers[i + 1] = gatherChunk(i + 1);
    const PipelineChunk &c = p.chunks[i];
    for (size_t s : p.body) {
      const Instr &in = program.instrs[s];
      OpExecuteContext ctx{*this, in, steps[s], comm, gemm, ops};
      failed = executeRows(ctx, c.slabStart, c.slabRows);
      if (!failed) {
        failed = failed.withContext(where(in) + std::to_string(i) + ")");
        break;
      }
    }
    if (!failed) {
      // The others wait in this chunk's reduce_scatter: fail it with them
      // (at once where the group checks together) rather than leave them
      // to the timeout.
      lane.submit([&, why = failed.message()](Communicator &on) {
        return on.failCollective(CollectiveKind::ReduceScatterV, reduceType,
                                 why);
      });
      break;
    }
    reduceChunk(i);
  }
  Status ended = lane.end();
  return failed ? ended : failed;
}

} // namespace shardlin::rt
