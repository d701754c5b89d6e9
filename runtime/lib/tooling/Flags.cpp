//===- Flags.cpp - The run options' flags of the tools --------------------===//

#include "shardlin/runtime/tooling/Flags.h"
#include "shardlin/runtime/backends/Registry.h"

#include <cstdio>

namespace shardlin::rt {

std::string flagOf(const Status &status, const RunOptions &options) {
  const std::string &s = status.subject();
  // On a grid the world size is --grid's TP (shardlin-run sets both).
  if (s == "replicas" || (s == "worldSize" && options.replicas > 1))
    return "--grid=" + std::to_string(options.replicas) + "x" +
           std::to_string(options.worldSize);
  if (s == "worldSize")
    return "--world-size=" + std::to_string(options.worldSize);
  if (s == "backend")
    return "--backend=" + options.backend;
  if (s == "device")
    return "--device=" + std::to_string(options.device);
  if (s == "blasThreads")
    return "--blas-threads=" + std::to_string(options.blasThreads);
  if (s == "timeout") {
    char text[32];
    std::snprintf(text, sizeof text, "%g", options.comm.timeoutSeconds);
    return std::string("--timeout=") + text;
  }
  return "";
}

std::string flagMessage(const Status &status, const RunOptions &options) {
  const std::string flag = flagOf(status, options);
  return flag.empty() ? status.message() : flag + ": " + status.message();
}

Status checkRunFlags(const RunOptions &options) {
  const BackendInfo *backend = nullptr;
  SHARDLIN_RETURN_IF_ERROR(
      lookupBackend(options.backend, backend).withSubject("backend"));
  return checkRunOptions(options);
}

} // namespace shardlin::rt
