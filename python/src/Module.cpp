//===- Module.cpp - shardlin._shardlin: the nanobind extension ------------===//
//
// The Python front door (docs/python.md): compile (Compiler.h, shardlin-run's
// compile) and run (Run.h, the runtime's in-memory run). The package's
// shardlin/__init__.py is the public API; this module converts arrays and
// errors and releases the GIL while the ranks run.
//
//===----------------------------------------------------------------------===//

#include "Compiler.h"
#include "Run.h"

#include "shardlin/runtime/backends/Host.h"
#include "shardlin/runtime/program/ProgramText.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <Python.h>

// NumPy's C API (this file's own copy of its function table, set by
// import_array at the module's init): reading a numpy.ndarray's data,
// shape and strides, and making the result arrays, without a buffer view,
// a DLPack capsule or a Python-level call per array (the call path's cost,
// python/bench/call_overhead.py).
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL shardlin_numpy_api
#include <numpy/arrayobject.h>

#include <chrono>
#include <csignal>

namespace nb = nanobind;
namespace rt = shardlin::rt;
namespace py = shardlin::python;

namespace {

/// shardlin.RuntimeError, set by the package at import (a leaked reference:
/// it must outlive the interpreter's teardown of this module).
PyObject *runtimeErrorClass = nullptr;

[[noreturn]] void raiseStatus(const rt::Status &status) {
  nb::object cls = nb::borrow(runtimeErrorClass ? runtimeErrorClass
                                                : PyExc_RuntimeError);
  nb::object err = cls(int(status.code()), status.message());
  PyErr_SetObject(cls.ptr(), err.ptr());
  throw nb::python_error();
}

nb::list diagnosticsList(const std::vector<py::Diagnostic> &diagnostics) {
  nb::list out;
  for (const py::Diagnostic &d : diagnostics)
    out.append(nb::make_tuple(d.location, d.severity, d.message));
  return out;
}



nb::object shapeTuple(const std::vector<int64_t> &shape) {
  nb::list dims;
  for (int64_t d : shape)
    dims.append(d == rt::kDynamic ? nb::none() : nb::cast(d));
  return nb::tuple(dims);
}

nb::dict chunkDict(const rt::ChunkSpec &spec) {
  nb::dict d;
  d["dim"] = spec.dim;
  d["placements"] = spec.placements;
  d["bounds"] = spec.bounds.empty() ? nb::none() : nb::cast(spec.bounds);
  return d;
}

/// The element type of a NumPy array's descriptor (native byte order):
/// false for any other (those take nanobind's path, which says what is
/// wrong). uint16 is bf16's bits (the package passes ml_dtypes.bfloat16
/// arrays as their uint16 view).
bool numpyDType(PyArrayObject *a, rt::DType &dtype) {
  if (!PyArray_ISNOTSWAPPED(a))
    return false;
  switch (PyArray_TYPE(a)) {
  case NPY_FLOAT:
    dtype = rt::DType::F32;
    return true;
  case NPY_DOUBLE:
    dtype = rt::DType::F64;
    return true;
  case NPY_HALF:
    dtype = rt::DType::F16;
    return true;
  case NPY_USHORT:
    dtype = rt::DType::BF16;
    return true;
  default:
    return false;
  }
}

/// A NumPy array (exactly numpy.ndarray) read through NumPy's C API: the
/// same view as nanobind's DLPack import, at the cost of a few field reads.
/// False where it is not one of the four element types or a stride is not
/// a whole number of elements.
bool numpyHostArray(nb::handle h, py::HostArray &out) {
  if (!PyArray_CheckExact(h.ptr()))
    return false;
  auto *a = reinterpret_cast<PyArrayObject *>(h.ptr());
  if (!numpyDType(a, out.dtype))
    return false;
  const int ndim = PyArray_NDIM(a);
  const npy_intp *shape = PyArray_DIMS(a);
  const npy_intp *strides = PyArray_STRIDES(a);
  const npy_intp itemsize = PyArray_ITEMSIZE(a);
  out.shape.assign(shape, shape + ndim);
  out.strides.resize(size_t(ndim));
  for (int d = 0; d < ndim; ++d) {
    if (strides[d] % itemsize != 0)
      return false;
    out.strides[size_t(d)] = strides[d] / itemsize;
  }
  // The array (held by the caller's arguments for the whole call) keeps
  // the memory.
  out.data = PyArray_DATA(a);
  return true;
}

/// The arrays of one argument from Python: an ndarray-like or a list of
/// them (per rank). A uint16 array is taken as bf16 bits (the package
/// passes ml_dtypes.bfloat16 arrays as their uint16 view).
py::HostArray hostArray(nb::handle h, size_t arg) {
  py::HostArray fast;
  if (numpyHostArray(h, fast))
    return fast;
  nb::ndarray<nb::ro, nb::device::cpu> a;
  if (!nb::try_cast(h, a, /*convert=*/false))
    throw nb::type_error(
        ("argument " + std::to_string(arg) + ": expected a NumPy array or an "
         "object with __dlpack__ in host memory, got " +
         std::string(nb::type_name(h.type()).c_str()))
            .c_str());
  py::HostArray out;
  const nb::dlpack::dtype t = a.dtype();
  if (t == nb::dtype<float>())
    out.dtype = rt::DType::F32;
  else if (t == nb::dtype<double>())
    out.dtype = rt::DType::F64;
  else if (t.code == uint8_t(nb::dlpack::dtype_code::Float) && t.bits == 16)
    out.dtype = rt::DType::F16;
  else if ((t.code == uint8_t(nb::dlpack::dtype_code::Bfloat) ||
            t.code == uint8_t(nb::dlpack::dtype_code::UInt)) &&
           t.bits == 16)
    out.dtype = rt::DType::BF16;
  else
    throw nb::type_error(("argument " + std::to_string(arg) +
                          ": element type (code " + std::to_string(t.code) +
                          ", " + std::to_string(t.bits) +
                          " bits) is not f16, bf16, f32 or f64")
                             .c_str());
  out.data = a.data();
  for (size_t d = 0; d < a.ndim(); ++d) {
    out.shape.push_back(int64_t(a.shape(d)));
    out.strides.push_back(int64_t(a.stride(d)));
  }
  return out;
}

py::ArgInput argInput(nb::handle h, size_t arg) {
  py::ArgInput in;
  if (nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h)) {
    in.perRank = true;
    for (nb::handle e : h)
      in.arrays.push_back(hostArray(e, arg));
    return in;
  }
  in.arrays.push_back(hostArray(h, arg));
  return in;
}

/// A result as a NumPy array that owns its buffer (through a capsule, its
/// base object; bf16 as uint16: the package views it as
/// ml_dtypes.bfloat16).
nb::object resultArray(const py::ResultArray &r) {
  int type = NPY_FLOAT;
  switch (r.dtype) {
  case rt::DType::F32:
    type = NPY_FLOAT;
    break;
  case rt::DType::F64:
    type = NPY_DOUBLE;
    break;
  case rt::DType::F16:
    type = NPY_HALF;
    break;
  case rt::DType::BF16:
    type = NPY_USHORT;
    break;
  }
  auto *holder = new std::shared_ptr<py::OwnedBuffer>(r.buffer);
  PyObject *owner = PyCapsule_New(holder, nullptr, [](PyObject *c) {
    delete static_cast<std::shared_ptr<py::OwnedBuffer> *>(
        PyCapsule_GetPointer(c, nullptr));
  });
  if (!owner) {
    delete holder;
    throw nb::python_error();
  }
  std::vector<npy_intp> shape(r.shape.begin(), r.shape.end());
  PyObject *array =
      PyArray_New(&PyArray_Type, int(shape.size()), shape.data(), type, nullptr,
                  r.buffer->data, 0, NPY_ARRAY_CARRAY, nullptr);
  if (!array) {
    Py_DECREF(owner);
    throw nb::python_error();
  }
  // Steals the reference to owner, also on failure.
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject *>(array), owner) !=
      0) {
    Py_DECREF(array);
    throw nb::python_error();
  }
  return nb::steal(array);
}

/// What a run bound (Program.last_run_info), converted to Python lists only
/// when read.
struct RunInfo {
  std::vector<int> ranks;
  py::BindInfo bind;
};

/// A compiled program, shared by its Python wrapper and its runs; and what
/// its last successful run bound (Program.last_run_info), kept in C++ until
/// read.
struct ProgramHandle {
  std::shared_ptr<const py::Compiled> compiled;
  std::shared_ptr<const RunInfo> lastRun;
};

nb::list argumentsInfo(const rt::Program &program) {
  nb::list out;
  for (size_t i = 0; i < program.args.size(); ++i) {
    const rt::Argument &a = program.args[i];
    nb::dict d;
    d["dtype"] = rt::dtypeName(a.type.dtype);
    d["shape"] = shapeTuple(a.type.shape);
    d["sharded"] = a.sharded;
    d["global_shape"] = a.sharded ? shapeTuple(a.globalShape) : nb::none();
    d["chunks"] = a.sharded ? nb::object(chunkDict(a.sharding)) : nb::none();
    d["replicated"] = a.replicated;
    d["location"] = a.location;
    d["parameter"] = a.parameter;
    out.append(d);
  }
  return out;
}

nb::list resultsInfo(const rt::Program &program) {
  nb::list out;
  for (size_t i = 0; i < program.results.size(); ++i) {
    const rt::ValueType &t = program.values[program.results[i]];
    const bool sharded = i < program.resultLayouts.size() &&
                         program.resultLayouts[i].sharded;
    nb::dict d;
    d["dtype"] = rt::dtypeName(t.dtype);
    d["shape"] = shapeTuple(t.shape);
    d["sharded"] = sharded;
    d["global_shape"] =
        sharded ? shapeTuple(program.resultLayouts[i].globalShape)
                : nb::none();
    d["chunks"] = sharded ? nb::object(chunkDict(program.resultLayouts[i].sharding))
                          : nb::none();
    out.append(d);
  }
  return out;
}

nb::list collectivesInfo(const rt::Program &program) {
  nb::list out;
  for (const rt::Instr &instr : program.instrs) {
    if (instr.op != rt::OpCode::AllGather && instr.op != rt::OpCode::AllToAll &&
        instr.op != rt::OpCode::ReduceScatter &&
        instr.op != rt::OpCode::AllReduce)
      continue;
    nb::dict d;
    d["op"] = rt::opCodeName(instr.op);
    const rt::ValueType &t = program.values[instr.result];
    d["dtype"] = rt::dtypeName(t.dtype);
    d["shape"] = shapeTuple(t.shape);
    d["strategy"] = instr.strategy;
    d["location"] = instr.location;
    out.append(d);
  }
  return out;
}

nb::tuple compileModule(const std::string &text, const std::string &path,
                        const std::string &entry, bool jit,
                        const std::string &jitCpu, const std::string &grid,
                        const std::string &lowering, int worldSize) {
  py::CompileRequest request{text, path, entry, jit, jitCpu, grid, lowering,
                             worldSize};
  std::vector<py::Diagnostic> diagnostics;
  std::string error;
  std::shared_ptr<const py::Compiled> compiled;
  {
    nb::gil_scoped_release release;
    compiled = py::compile(request, diagnostics, error);
  }
  if (!compiled)
    return nb::make_tuple(nb::none(), diagnosticsList(diagnostics), error);
  return nb::make_tuple(ProgramHandle{compiled}, nb::list(), std::string());
}

/// Compiler.h's transform: (text, diagnostics, error); text is None on
/// failure.
nb::tuple transformModule(const std::string &text, const std::string &path,
                          const std::string &pipeline) {
  std::vector<py::Diagnostic> diagnostics;
  std::string error;
  std::string out;
  {
    nb::gil_scoped_release release;
    out = py::transform(text, path, pipeline, diagnostics, error);
  }
  return nb::make_tuple(out.empty() ? nb::none() : nb::cast(out),
                        diagnosticsList(diagnostics), error);
}

/// Program.run's work: the results as the package returns them (one
/// array, a tuple for several; per rank, a list over ranks of lists), no
/// other Python object made per call but the arrays (the call path's
/// cost, docs/performance.md: fewer objects also means fewer of the
/// garbage collector's passes).
nb::object runProgram(ProgramHandle &handle, nb::sequence args,
                      const std::string &backend, int worldSize, int device,
                      double timeout, int blasThreads, bool checkReplicated,
                      bool perRank) {
  py::RunRequest request;
  size_t i = 0;
  for (nb::handle a : args)
    request.args.push_back(argInput(a, i++));
  request.backend = backend;
  request.worldSize = worldSize;
  request.device = device;
  request.timeoutSeconds = timeout;
  request.blasThreads = blasThreads;
  request.checkReplicated = checkReplicated;
  request.assemble = !perRank;
  py::RunOutcome outcome;
  {
    nb::gil_scoped_release release;
    py::runCompiled(*handle.compiled, request, outcome);
  }
  if (outcome.interrupted) {
    // Python's own handler raises KeyboardInterrupt (or whatever the
    // program installed for SIGINT).
    PyErr_SetInterruptEx(SIGINT);
    if (PyErr_CheckSignals() != 0)
      throw nb::python_error();
  }
  if (!outcome.status.isOk())
    raiseStatus(outcome.status);
  nb::object results;
  if (perRank) {
    nb::list ranks;
    for (const std::vector<py::ResultArray> &rank : outcome.results) {
      nb::list own;
      for (const py::ResultArray &r : rank)
        own.append(resultArray(r));
      ranks.append(own);
    }
    results = std::move(ranks);
  } else if (outcome.assembled.size() == 1) {
    results = resultArray(outcome.assembled.front());
  } else {
    nb::tuple all =
        nb::steal<nb::tuple>(PyTuple_New(Py_ssize_t(outcome.assembled.size())));
    for (size_t i = 0; i < outcome.assembled.size(); ++i)
      PyTuple_SET_ITEM(all.ptr(), Py_ssize_t(i),
                       resultArray(outcome.assembled[i]).release().ptr());
    results = std::move(all);
  }
  handle.lastRun = std::make_shared<const RunInfo>(
      RunInfo{std::move(outcome.ranks), std::move(outcome.bind)});
  return results;
}

/// The same run as runProgram from C++ alone, `iterations` times on
/// arguments converted once: the baseline of python/bench/call_overhead.py
/// (the Python call path's cost is Program.run's time minus this one's).
/// Returns each call's seconds.
std::vector<double> benchNative(const ProgramHandle &handle, nb::sequence args,
                                int iterations) {
  py::RunRequest request;
  size_t i = 0;
  for (nb::handle a : args)
    request.args.push_back(argInput(a, i++));
  std::vector<double> seconds;
  nb::gil_scoped_release release;
  for (int it = 0; it < iterations; ++it) {
    const auto start = std::chrono::steady_clock::now();
    py::RunOutcome outcome;
    py::runCompiled(*handle.compiled, request, outcome);
    seconds.push_back(std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count());
    if (!outcome.status.isOk())
      return {};
  }
  return seconds;
}

} // namespace

NB_MODULE(_shardlin, m) {
  m.doc() = "shardlin's compiler and runtime (docs/python.md)";
  if (_import_array() < 0)
    throw nb::python_error();
  // A program that is still referenced when the interpreter exits (a
  // global tensor whose autograd graph holds shardlin.torch's function,
  // which torch frees after this module's teardown) is not a leak: the
  // process ends. nanobind would list each such object on stderr.
  nb::set_leak_warnings(false);
  nb::class_<ProgramHandle>(m, "ProgramHandle")
      .def_prop_ro(
          "name",
          [](const ProgramHandle &h) { return h.compiled->program.name; })
      .def_prop_ro(
          "world_size",
          [](const ProgramHandle &h) { return h.compiled->program.worldSize; })
      .def_prop_ro("text",
                   [](const ProgramHandle &h) {
                     return rt::serializeProgram(h.compiled->program);
                   })
      .def_prop_ro(
          "jit",
          [](const ProgramHandle &h) { return bool(h.compiled->executors); })
      .def_prop_ro("grid",
                   [](const ProgramHandle &h) { return h.compiled->gridName; })
      .def_prop_ro("arguments",
                   [](const ProgramHandle &h) {
                     return argumentsInfo(h.compiled->program);
                   })
      .def_prop_ro("results",
                   [](const ProgramHandle &h) {
                     return resultsInfo(h.compiled->program);
                   })
      .def_prop_ro("collectives",
                   [](const ProgramHandle &h) {
                     return collectivesInfo(h.compiled->program);
                   })
      .def_prop_ro("explanation",
                   [](const ProgramHandle &h) {
                     return diagnosticsList(h.compiled->explanation);
                   })
      .def_prop_ro("warnings",
                   [](const ProgramHandle &h) {
                     return diagnosticsList(h.compiled->warnings);
                   })
      .def_prop_ro("last_run_info", [](const ProgramHandle &h) -> nb::object {
        if (!h.lastRun)
          return nb::none();
        return nb::cast(RunInfo(*h.lastRun));
      });
  nb::class_<RunInfo>(m, "RunInfo")
      .def_prop_ro("ranks", [](const RunInfo &i) { return i.ranks; })
      .def_prop_ro("arg_addresses",
                   [](const RunInfo &i) { return i.bind.addresses; })
      .def_prop_ro("arg_copied", [](const RunInfo &i) {
        nb::list out;
        for (const std::vector<bool> &rank : i.bind.copied) {
          nb::list c;
          for (bool b : rank)
            c.append(b);
          out.append(c);
        }
        return out;
      });
  m.def("compile", &compileModule, nb::arg("text"), nb::arg("path"),
        nb::arg("entry"), nb::arg("jit"), nb::arg("jit_cpu"), nb::arg("grid"),
        nb::arg("lowering"), nb::arg("world_size"));
  m.def("transform", &transformModule, nb::arg("text"), nb::arg("path"),
        nb::arg("pipeline"));
  m.def("run", &runProgram, nb::arg("program"), nb::arg("args"),
        nb::arg("backend"), nb::arg("world_size"), nb::arg("device"),
        nb::arg("timeout"), nb::arg("blas_threads"),
        nb::arg("check_replicated"), nb::arg("per_rank"));
  m.def("lowering_options", &py::loweringOptionNames);
  m.def("blas_kernels", &shardlin::rt::blasCoreName);
  m.def("status_name", [](int code) {
    return std::string(rt::statusCodeName(rt::StatusCode(code)));
  });
  m.def("_set_runtime_error", [](nb::object cls) {
    Py_XDECREF(runtimeErrorClass);
    runtimeErrorClass = cls.release().ptr();
  });
  m.def("_finalize_mpi", &py::finalizeMpi);
  m.def("_bench_native", &benchNative, nb::arg("program"), nb::arg("args"),
        nb::arg("iterations"));
}
