//===- LowerToLLVM.cpp - The --shardlin-lower-to-llvm pipeline ------------===//
//
// In the manner of upstream's buildSparsifier: shardlin's passes around
// upstream's bufferization and to-LLVM conversions, in the one order that
// works (docs/native.md says why each step is where it is).
//
//===----------------------------------------------------------------------===//

#include "shardlin/Conversion/ShardlinToLLVM/Passes.h"
#include "shardlin/Dialect/Shardlin/IR/ShardlinDialect.h"
#include "shardlin/Dialect/Shardlin/Pipelines/Pipelines.h"
#include "shardlin/Dialect/Shardlin/Native/Passes.h"

// The conversions' own headers, not mlir/Conversion/Passes.h: that one
// declares every upstream conversion and took most of this file's compile
// time (about 25 of 30 s).
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Arith/Transforms/BufferViewFlowOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/BufferViewFlowOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

using namespace mlir;
using namespace mlir::shardlin;

namespace {

/// LowerToLLVMOptions::resultsAsOutParams: upstream's
/// promoteBufferResultsToOutParams on the public functions whose results
/// all have static shapes (a caller cannot size a buffer for the others).
struct EntryResultsToOutParams
    : PassWrapper<EntryResultsToOutParams, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(EntryResultsToOutParams)
  StringRef getArgument() const override {
    return "shardlin-entry-results-to-out-params";
  }
  StringRef getDescription() const override {
    return "Static-shaped results of public functions as out-params";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<memref::MemRefDialect>();
  }
  static bool converted(func::FuncOp func) {
    return func.isPublic() && !func.isExternal() &&
           llvm::all_of(func.getResultTypes(), [](Type t) {
             auto memref = dyn_cast<MemRefType>(t);
             return memref && memref.hasStaticShape();
           });
  }

  void runOnOperation() override {
    // A value returned twice (`return %y, %y`) gets a copy of its own for
    // the second out-param: upstream's hoisting replaces the allocation of
    // the first and would then read the erased one (it crashed on it).
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!converted(func))
        continue;
      func.walk([&](func::ReturnOp ret) {
        OpBuilder b(ret);
        for (OpOperand &operand : ret->getOpOperands()) {
          Value v = operand.get();
          auto firstUse = llvm::find(ret.getOperands(), v);
          if (firstUse - ret.getOperands().begin() ==
              static_cast<ptrdiff_t>(operand.getOperandNumber()))
            continue;
          auto type = cast<MemRefType>(v.getType());
          Value copy = memref::AllocOp::create(b, ret.getLoc(), type);
          memref::CopyOp::create(b, ret.getLoc(), v, copy);
          operand.set(copy);
        }
      });
    }
    bufferization::BufferResultsToOutParamsOpts options;
    options.modifyPublicFunctions = true;
    options.hoistStaticAllocs = true;
    options.filterFn = [](func::FuncOp *func) { return converted(*func); };
    if (failed(bufferization::promoteBufferResultsToOutParams(getOperation(),
                                                              options)))
      signalPassFailure();
  }
};

/// bf16 conversions (arith.truncf/extf to and from bf16) as integer
/// arithmetic (upstream's populateExpandBFloat16Patterns: round to nearest
/// even, NaNs kept quiet), before arith-to-llvm. Left to LLVM, a truncf to
/// bf16 becomes a call of `__truncsfbf2` on every CPU without AVX512-BF16,
/// which the compiler runtime of GCC 12 (Debian 12's libgcc) does not
/// define: the JIT then fails to link, and so would an AOT object there.
/// Expanded here, the code needs no symbol and rounds alike on every CPU.
/// (bf16 arithmetic is first made f32 arithmetic between an extf and a
/// truncf, as LLVM would promote it: see buildLowerToLLVMPipeline.)
struct ExpandBFloat16Conversions
    : PassWrapper<ExpandBFloat16Conversions, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExpandBFloat16Conversions)
  StringRef getArgument() const override {
    return "shardlin-expand-bf16-conversions";
  }
  StringRef getDescription() const override {
    return "bf16 truncf/extf as integer arithmetic, so that no compiler "
           "runtime symbol is needed";
  }
  void runOnOperation() override {
    // One walk, no folding: the rest of the module stays as it is.
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

/// The pipeline's command-line options.
struct LowerToLLVMPipelineOptions
    : PassPipelineOptions<LowerToLLVMPipelineOptions> {
  Option<bool> resultsAsOutParams{
      *this, "results-as-out-params",
      llvm::cl::desc("Public functions with static-shaped results write them "
                     "into buffers their caller passes after the arguments"),
      llvm::cl::init(false)};
};

/// Checks the pipeline's option string (`results-as-out-params[=BOOL]`,
/// the only option) with a message that names the pipeline and its options.
LogicalResult
checkPipelineOptions(StringRef text,
                     function_ref<LogicalResult(const Twine &)> errorHandler) {
  SmallVector<StringRef> tokens;
  text.split(tokens, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef token : tokens) {
    auto [key, value] = token.split('=');
    if (key != "results-as-out-params")
      return errorHandler("shardlin-lower-to-llvm has no option '" + key +
                          "' (its only option: results-as-out-params=BOOL; "
                          "lower-sharded-linear's options are given to that "
                          "pass, before this pipeline)");
    if (token.contains('=') &&
        !llvm::is_contained({"true", "false", "1", "0"}, value))
      return errorHandler("shardlin-lower-to-llvm: invalid value '" + value +
                          "' for option 'results-as-out-params': expected "
                          "true or false");
  }
  return success();
}

} // namespace

void mlir::shardlin::buildLowerToLLVMPipeline(
    OpPassManager &pm, const LowerToLLVMOptions &options) {
  // 1. shardlin.linear -> SPMD ops on tensors (a no-op on lowered IR).
  pm.addNestedPass<func::FuncOp>(createLowerShardedLinear(options.lowering));
  // 2. Entries marked; linalg aggregates (softmax) decomposed; stacked
  //    rows given their bounds (while the sharded types still say which
  //    rows are one sharded type's chunks); sharded values -> the rank's
  //    local tensors; elementwise arith/math on tensors -> linalg.generic:
  //    all of it bufferizable.
  pm.addPass(createPrepareNative());
  pm.addPass(createLocalizeSharded());
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  // 3. Tensors -> buffers, function boundaries included, identity layouts
  //    at the boundaries (what a launcher's plain row-major arrays are).
  pm.addPass(bufferization::createEmptyTensorEliminationPass());
  pm.addPass(bufferization::createEmptyTensorToAllocTensorPass());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  if (options.resultsAsOutParams)
    pm.addPass(std::make_unique<EntryResultsToOutParams>());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Folds the chunk arithmetic (and shardlin.rank for one rank).
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // 4. Loops, the runtime calls, then upstream's conversions to LLVM.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createConvertShardlinToLLVM());
  // Upstream's expand-strided-metadata crashes on an expand_shape that
  // splits one dim into several dynamic ones (a linear on ?x?xK): those
  // become reinterpret_casts first.
  pm.addPass(createExpandShapeToReinterpretCast());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // bf16 (and f16) math and bf16 arithmetic computed in f32 between an
  // extf and a truncf, the promotion LLVM would make itself, so that the
  // truncations are ours to expand (ExpandBFloat16Conversions) rather than
  // LLVM's calls of __truncsfbf2.
  pm.addPass(math::createMathExtendToSupportedTypes());
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"bf16"};
  emulate.targetTypeStr = "f32";
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(std::make_unique<ExpandBFloat16Conversions>());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::shardlin::registerLowerToLLVMDialects(DialectRegistry &registry) {
  registry.insert<ShardlinDialect, affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, linalg::LinalgDialect, LLVM::LLVMDialect,
                  math::MathDialect, memref::MemRefDialect, scf::SCFDialect,
                  tensor::TensorDialect, ub::UBDialect>();
  mlir::shardlin::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  arith::registerBufferViewFlowOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  cf::registerBufferizableOpInterfaceExternalModels(registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerSubsetOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  memref::registerBufferViewFlowOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerSubsetOpInterfaceExternalModels(registry);
}

void mlir::shardlin::registerShardlinPipelines() {
  registerShardlinNativePasses();
  registerShardlinConversionPasses();
  // The upstream passes of the pipeline, so that its steps can be run (and
  // named in --mlir-print-ir-after) one by one.
  bufferization::registerBufferizationPasses();
  bufferization::registerBufferizationPipelines();
  registerConvertElementwiseToLinalgPass();
  registerConvertLinalgToLoopsPass();
  memref::registerExpandStridedMetadataPass();
  // The conversions' register functions live in mlir/Conversion/Passes.h
  // only (see the includes): their passes are registered from their
  // constructors instead.
  using Create = std::unique_ptr<Pass> (*)();
  const Create conversions[] = {createLowerAffinePass,
                                createSCFToControlFlowPass,
                                createConvertMathToLLVMPass,
                                createConvertMathToLibmPass,
                                createArithToLLVMConversionPass,
                                createConvertIndexToLLVMPass,
                                createFinalizeMemRefToLLVMConversionPass,
                                createConvertControlFlowToLLVMPass,
                                createConvertFuncToLLVMPass,
                                createUBToLLVMConversionPass,
                                createReconcileUnrealizedCastsPass,
                                createConvertBufferizationToMemRefPass};
  for (Create create : conversions)
    registerPass(create);
  // Registered by hand rather than by PassPipelineRegistration, whose
  // parser reports an unknown option as "<Pass-Options-Parser>: no such
  // option" on stderr, naming neither the pipeline nor its options.
  registerPassPipeline(
      "shardlin-lower-to-llvm",
      "Lower shardlin linears (or their SPMD ops) and upstream tensor ops to "
      "the LLVM dialect, shardlin's ops as calls of the runtime's C ABI "
      "(docs/native.md)",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        if (failed(checkPipelineOptions(text, errorHandler)))
          return failure();
        LowerToLLVMPipelineOptions given;
        if (failed(given.parseFromString(text)))
          return failure();
        LowerToLLVMOptions options;
        options.resultsAsOutParams = given.resultsAsOutParams;
        buildLowerToLLVMPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const ::mlir::detail::PassOptions &)> optHandler) {
        optHandler(LowerToLLVMPipelineOptions());
      });
}
