//===- Errors.cpp - The C ABI's statuses and messages ---------------------===//

#include "capi/Errors.h"

#include <exception>
#include <new>
#include <utility>

namespace shardlin::rt::capi {

namespace {

/// The C ABI's codes and the C++ runtime's, one pair each.
constexpr std::pair<StatusCode, shardlin_status> kStatusCodes[] = {
    {StatusCode::Ok, SHARDLIN_OK},
    {StatusCode::InvalidArgument, SHARDLIN_INVALID_ARGUMENT},
    {StatusCode::DeadlineExceeded, SHARDLIN_DEADLINE_EXCEEDED},
    {StatusCode::Aborted, SHARDLIN_ABORTED},
    {StatusCode::IoError, SHARDLIN_IO_ERROR},
    {StatusCode::Unavailable, SHARDLIN_UNAVAILABLE},
    {StatusCode::Internal, SHARDLIN_INTERNAL},
    {StatusCode::NotFound, SHARDLIN_NOT_FOUND},
    {StatusCode::ResourceExhausted, SHARDLIN_RESOURCE_EXHAUSTED},
};

thread_local std::string lastError;

} // namespace

shardlin_status toC(StatusCode code) {
  for (const auto &[cpp, c] : kStatusCodes)
    if (cpp == code)
      return c;
  return SHARDLIN_INTERNAL;
}

StatusCode fromC(shardlin_status status) {
  for (const auto &[cpp, c] : kStatusCodes)
    if (c == status)
      return cpp;
  return StatusCode::Internal;
}

const char *statusName(shardlin_status status) {
  // The table of both ways names each C code once.
  for (const auto &[cpp, c] : kStatusCodes)
    if (c == status)
      return statusCodeName(cpp);
  return "unknown";
}

const char *lastErrorMessage() { return lastError.c_str(); }

void setLastError(const std::string &message) noexcept {
  try {
    lastError = message;
  } catch (...) {
  }
}

shardlin_status finish(const Status &st) noexcept {
  if (st.isOk())
    return SHARDLIN_OK;
  setLastError(st.message());
  return toC(st.code());
}

Status fromException(const char *fn) {
  try {
    throw;
  } catch (const std::bad_alloc &) {
    return Status::resourceExhausted(std::string(fn) + ": out of host memory");
  } catch (const std::exception &e) {
    return Status::internal(std::string(fn) + ": " + e.what());
  } catch (...) {
    return Status::internal(std::string(fn) + ": unknown C++ exception");
  }
}

} // namespace shardlin::rt::capi
