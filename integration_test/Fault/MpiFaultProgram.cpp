//===- MpiFaultProgram.cpp - A faulty rank under mpirun -------------------===//
//
//   mpirun -np 3 shardlin-fault-mpi --fault=error|exit|skip|mismatch|none
//          [--rank=R] [--call=N] [--timeout=S] [--dim=0|1] --dir=DIR
//
// Runs a real lowered layer (FaultSupport.h) through runProgramWithFiles on
// the mpi backend, exactly as shardlin-run and shardlin-exec do, with one
// rank misbehaving at one collective (FaultyCommunicator.h). Like the tools,
// a failed rank prints one line "shardlin-fault: error: MESSAGE" and returns
// 1, after which its MpiSession either finalizes or, if a collective of this
// rank timed out and is still pending, ends the job with MPI_Abort.
// run-fault.sh checks the exit code, the time and the messages.
//
//===----------------------------------------------------------------------===//

#include "FaultSupport.h"
#include "FaultyCommunicator.h"

#include "shardlin/runtime/backends/Mpi.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

using namespace shardlin;

namespace {
int fail(const std::string &message) {
  std::cerr << ("shardlin-fault: error: " + message + "\n") << std::flush;
  return 1;
}
} // namespace

int main(int argc, char **argv) {
  fault::FaultSpec spec;
  double timeout = 1.0;
  int64_t dim = 1;
  std::string dir;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag, std::string &out) {
      std::string f = std::string(flag) + "=";
      if (a.rfind(f, 0) != 0)
        return false;
      out = a.substr(f.size());
      return true;
    };
    std::string v;
    if (value("--fault", v)) {
      if (!fault::parseFault(v, spec.kind))
        return fail("unknown fault '" + v + "'");
    } else if (value("--rank", v)) {
      spec.rank = std::atoi(v.c_str());
    } else if (value("--call", v)) {
      spec.call = std::atoi(v.c_str());
    } else if (value("--timeout", v)) {
      timeout = std::atof(v.c_str());
    } else if (value("--dim", v)) {
      dim = std::atoi(v.c_str());
    } else if (value("--dir", v)) {
      dir = v;
    } else {
      return fail("unknown argument '" + a + "'");
    }
  }
  if (dir.empty())
    return fail("--dir is required");

  std::unique_ptr<rt::MpiSession> session;
  rt::Status s = rt::MpiSession::create(&argc, &argv, session);
  if (!s)
    return fail(s.message());

  e2e::LinearConfig layer = fault::faultLinear(dim);
  if (session->worldSize() != layer.worldSize())
    return fail("run this under mpirun -np " +
                std::to_string(layer.worldSize()));
  rt::Program program;
  s = e2e::compileLinear(layer, program);
  if (!s)
    return fail(s.message());

  rt::RunConfig config;
  config.backend = "mpi";
  config.comm.timeoutSeconds = timeout;
  config.blasThreads = 1;
  s = fault::writeInputs(layer, dir, session->rank(), config);
  if (!s)
    return fail(s.message());
  config.wrapCommunicator = [&](std::unique_ptr<rt::Communicator> inner) {
    return std::unique_ptr<rt::Communicator>(
        new fault::FaultyCommunicator(std::move(inner), spec));
  };
  s = rt::runProgramWithFiles(program, config);
  if (!s)
    return fail(s.message());
  std::printf("shardlin-fault: rank %d ok\n", session->rank());
  return 0;
}
