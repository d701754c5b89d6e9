//===- ExprSplit.cpp - An expression too large for one instruction --------===//
//
// splitExpr (Expr.h). The nodes are visited in order; each one's "need" is
// the set of nodes one instruction computing it would hold: itself, and the
// needs of its args, where an arg that is already a piece of its own counts
// as one input node. When a need outgrows the limit, the largest of the
// node's args (through a boolean arg, that boolean's args) become pieces of
// their own until it fits: every need then holds at most the node, its
// three args and a comparison's two, so each node fits, and each piece is a
// need that fitted when it was made.
//
//===----------------------------------------------------------------------===//

#include "shardlin/runtime/base/Expr.h"

#include <algorithm>
#include <map>

namespace shardlin::rt {

namespace {

class Splitter {
public:
  Splitter(const ExprProgram &expr, const std::vector<bool> &rowVectors,
           size_t maxNodes)
      : nodes_(expr.nodes), rowVectors_(rowVectors), max_(maxNodes),
        need_(nodes_.size()), piece_(nodes_.size(), false),
        readsOperand_(nodes_.size(), false) {}

  Status run(const std::string &what, std::vector<ExprPiece> &pieces) {
    const int result = static_cast<int>(nodes_.size()) - 1;
    for (int n = 0; n <= result; ++n) {
      const ExprNode &node = nodes_[size_t(n)];
      readsOperand_[size_t(n)] = node.op == ExprOp::Input;
      for (int a : args(n))
        readsOperand_[size_t(n)] =
            readsOperand_[size_t(n)] || readsOperand_[size_t(a)];
      SHARDLIN_RETURN_IF_ERROR(fit(n, what));
    }
    piece_[size_t(result)] = true;
    std::map<int, int> pieceIndex;
    for (int n = 0; n <= result; ++n)
      if (piece_[size_t(n)] && reachable(n, result)) {
        pieceIndex[n] = static_cast<int>(pieces.size());
        pieces.push_back(makePiece(n, pieceIndex, pieces));
      }
    return Status::ok();
  }

private:
  std::vector<int> args(int n) const {
    const ExprNode &node = nodes_[size_t(n)];
    std::vector<int> out;
    for (int k = 0; k < exprOpArity(node.op); ++k)
      out.push_back(node.args[k]);
    return out;
  }
  bool isBool(int n) const { return nodes_[size_t(n)].op == ExprOp::Cmp; }
  /// Whether node `n` may be a piece of its own: a float value that reads
  /// an operand (a part made of constants alone has no shape to take).
  bool canBePiece(int n) const {
    const ExprOp op = nodes_[size_t(n)].op;
    return op != ExprOp::Input && op != ExprOp::Const && !isBool(n) &&
           readsOperand_[size_t(n)];
  }

  /// The need of `n` from its args' current state (sorted node indices).
  std::vector<int> needOf(int n) const {
    std::vector<int> out{n};
    for (int a : args(n)) {
      if (piece_[size_t(a)]) {
        out.push_back(a);
        continue;
      }
      const std::vector<int> &sub = need_[size_t(a)];
      out.insert(out.end(), sub.begin(), sub.end());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  Status fit(int n, const std::string &what) {
    need_[size_t(n)] = needOf(n);
    while (need_[size_t(n)].size() > max_) {
      // The candidates: n's args, and a boolean arg's args.
      int best = -1;
      for (int a : args(n)) {
        std::vector<int> candidates{a};
        if (isBool(a))
          candidates = args(a);
        for (int c : candidates)
          if (!piece_[size_t(c)] && canBePiece(c) &&
              (best < 0 || need_[size_t(c)].size() > need_[size_t(best)].size()))
            best = c;
      }
      if (best < 0)
        return Status::invalidArgument(
            what + ": expression node " + std::to_string(n) + " (" +
            exprOpName(nodes_[size_t(n)].op) + ") needs " +
            std::to_string(need_[size_t(n)].size()) +
            " nodes, more than one instruction holds (" +
            std::to_string(max_) + "), and the parts that could be split "
            "off read no operand (constants alone)");
      piece_[size_t(best)] = true;
      for (int a : args(n))
        if (isBool(a))
          need_[size_t(a)] = needOf(a);
      need_[size_t(n)] = needOf(n);
    }
    return Status::ok();
  }

  /// Whether piece root `n` is read by the result's instruction chain.
  bool reachable(int n, int result) {
    if (reached_.empty()) {
      reached_.assign(nodes_.size(), false);
      reached_[size_t(result)] = true;
      for (int m = result; m >= 0; --m)
        if (reached_[size_t(m)])
          for (int a : args(m))
            reached_[size_t(a)] = true;
    }
    return reached_[size_t(n)];
  }

  /// The piece computing node `root`: the nodes it needs, the pieces it
  /// reads as inputs.
  ExprPiece makePiece(int root, const std::map<int, int> &pieceIndex,
                      const std::vector<ExprPiece> &earlier) const {
    // The nodes, found from the root down to other pieces and operands.
    std::vector<bool> in(nodes_.size(), false);
    in[size_t(root)] = true;
    for (int m = root; m >= 0; --m) {
      if (!in[size_t(m)] || (m != root && piece_[size_t(m)]))
        continue;
      for (int a : args(m))
        in[size_t(a)] = true;
    }
    ExprPiece piece;
    piece.rowVector = true;
    std::map<int, int> renumbered;
    std::map<int, int> operandOf; // operand reference -> piece operand
    for (int m = 0; m <= root; ++m) {
      if (!in[size_t(m)])
        continue;
      const ExprNode &node = nodes_[size_t(m)];
      ExprNode copy = node;
      int ref = 0;
      bool isInput = false;
      if (m != root && piece_[size_t(m)]) {
        ref = -1 - pieceIndex.at(m);
        isInput = true;
        piece.rowVector =
            piece.rowVector && earlier[size_t(pieceIndex.at(m))].rowVector;
      } else if (node.op == ExprOp::Input) {
        ref = node.input;
        isInput = true;
        piece.rowVector = piece.rowVector &&
                          size_t(node.input) < rowVectors_.size() &&
                          rowVectors_[size_t(node.input)];
      }
      if (isInput) {
        auto [it, fresh] = operandOf.emplace(
            ref, static_cast<int>(piece.operands.size()));
        if (fresh)
          piece.operands.push_back(ref);
        copy = ExprNode();
        copy.op = ExprOp::Input;
        copy.input = it->second;
      } else {
        for (int k = 0; k < exprOpArity(node.op); ++k)
          copy.args[k] = renumbered.at(node.args[k]);
      }
      renumbered[m] = static_cast<int>(piece.expr.nodes.size());
      piece.expr.nodes.push_back(copy);
    }
    return piece;
  }

  const std::vector<ExprNode> &nodes_;
  const std::vector<bool> &rowVectors_;
  const size_t max_;
  std::vector<std::vector<int>> need_;
  std::vector<bool> piece_;
  std::vector<bool> readsOperand_;
  std::vector<bool> reached_;
};

} // namespace

Status splitExpr(const ExprProgram &expr, const std::vector<bool> &rowVectors,
                 size_t maxNodes, const std::string &what,
                 std::vector<ExprPiece> &pieces) {
  pieces.clear();
  if (expr.nodes.empty())
    return Status::invalidArgument(what + " has an empty expression");
  if (maxNodes < 8)
    return Status::invalidArgument(what + ": pieces of at most " +
                                   std::to_string(maxNodes) +
                                   " nodes are too small to split into");
  return Splitter(expr, rowVectors, maxNodes).run(what, pieces);
}

} // namespace shardlin::rt
