//===- Status.cpp - Status code names --------------------------------------===//

#include "shardlin/runtime/base/Status.h"

namespace shardlin::rt {

const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::Ok:
    return "ok";
  case StatusCode::InvalidArgument:
    return "invalid argument";
  case StatusCode::NotFound:
    return "not found";
  case StatusCode::ResourceExhausted:
    return "resource exhausted";
  case StatusCode::DeadlineExceeded:
    return "deadline exceeded";
  case StatusCode::Aborted:
    return "aborted";
  case StatusCode::IoError:
    return "I/O error";
  case StatusCode::Unavailable:
    return "unavailable";
  case StatusCode::Internal:
    return "internal";
  }
  return "unknown";
}

} // namespace shardlin::rt
