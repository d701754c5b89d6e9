//===- CudaSupport.cpp - Devices, streams, memory and CUDA errors ---------===//

#include "backends/cuda/CudaCheck.h"

#include "shardlin/runtime/backends/Cuda.h"

#include <chrono>
#include <cstring>
#include <thread>

namespace shardlin::rt {
namespace cuda {

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

namespace {

/// "cudaMemcpyAsync(dst, src, n, kind, s)" -> "cudaMemcpyAsync".
std::string callName(const char *call) {
  std::string s(call ? call : "<unknown call>");
  size_t paren = s.find('(');
  if (paren != std::string::npos)
    s.resize(paren);
  // Trim spaces a macro argument may carry.
  size_t b = s.find_first_not_of(" \t\n");
  size_t e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? s : s.substr(b, e - b + 1);
}

std::string onDevice(int device) {
  return device < 0 ? "" : " on cuda:" + std::to_string(device);
}

} // namespace

Status cudaFailure(cudaError_t error, const char *call, int device) {
  // Clears the error for non-sticky failures, so a later unrelated check
  // (cudaGetLastError after a launch) does not report this one again.
  (void)cudaGetLastError();
  return Status::internal(callName(call) + " failed" + onDevice(device) + ": " +
                       cudaGetErrorName(error) + " (" +
                       cudaGetErrorString(error) + ")");
}

Status cublasFailure(cublasStatus_t status, const char *call, int device) {
  return Status::internal(callName(call) + " failed" + onDevice(device) + ": " +
                       cublasGetStatusName(status) + " (" +
                       cublasGetStatusString(status) + ")");
}

#if defined(SHARDLIN_HAVE_NCCL)
Status ncclFailure(ncclResult_t result, const char *call, int device,
                   ncclComm_t comm) {
  std::string message = callName(call) + " failed" + onDevice(device) + ": " +
                        ncclGetErrorString(result);
  const char *last = ncclGetLastError(comm);
  if (last && *last)
    message += std::string(" (") + last + ")";
  return Status::internal(message);
}
#endif

//===----------------------------------------------------------------------===//
// RAII
//===----------------------------------------------------------------------===//

Status ScopedDevice::enter(int device) {
  int current = -1;
  SHARDLIN_CUDA_RETURN_IF_ERROR(device, cudaGetDevice(&current));
  if (current != device)
    SHARDLIN_CUDA_RETURN_IF_ERROR(device, cudaSetDevice(device));
  previous_ = current;
  return Status::ok();
}

ScopedDevice::~ScopedDevice() {
  // Restoring can only fail if the previous device vanished; nothing useful
  // can be done about it in a destructor.
  if (previous_ >= 0)
    (void)cudaSetDevice(previous_);
}

Status Event::create(int device, bool blockingSync) {
  reset();
  unsigned flags = cudaEventDisableTiming;
  if (blockingSync)
    flags |= cudaEventBlockingSync;
  SHARDLIN_CUDA_RETURN_IF_ERROR(device,
                                cudaEventCreateWithFlags(&event_, flags));
  return Status::ok();
}

void Event::reset() {
  if (event_)
    (void)cudaEventDestroy(event_);
  event_ = nullptr;
}

Status DeviceMemory::allocate(int device, size_t bytes) {
  reset();
  if (bytes == 0)
    return Status::ok();
  ScopedDevice guard;
  SHARDLIN_RETURN_IF_ERROR(guard.enter(device));
  void *p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess)
    return cudaFailure(e, "cudaMalloc", device)
        .withContext("allocating " + std::to_string(bytes) + " bytes");
  ptr_ = p;
  bytes_ = bytes;
  device_ = device;
  return Status::ok();
}

void DeviceMemory::reset() {
  if (ptr_) {
    ScopedDevice guard;
    if (guard.enter(device_).isOk())
      (void)cudaFree(ptr_);
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

Status StreamScratch::reserve(size_t bytes, int device, cudaStream_t stream) {
  if (bytes <= bytes_)
    return Status::ok();
  if (ptr_ && stream != stream_) {
    // Its uses may be on both streams (a communicator's collectives move to
    // a pipelined block's second stream and back, exec/CommLane.h): the
    // free, on the stream it was allocated on, waits for this one too.
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
    Event after;
    SHARDLIN_RETURN_IF_ERROR(after.create(device_, false));
    cudaError_t e = cudaEventRecord(after.get(), stream);
    if (e == cudaSuccess)
      e = cudaStreamWaitEvent(stream_, after.get(), 0);
    if (e != cudaSuccess)
      return cudaFailure(e, "cudaStreamWaitEvent", device_)
          .withContext("ordering the release of scratch memory");
  }
  reset();
  void *p = nullptr;
  cudaError_t e = cudaMallocAsync(&p, bytes, stream);
  if (e != cudaSuccess)
    return cudaFailure(e, "cudaMallocAsync", device)
        .withContext("allocating " + std::to_string(bytes) +
                     " bytes of scratch");
  ptr_ = p;
  bytes_ = bytes;
  device_ = device;
  stream_ = stream;
  return Status::ok();
}

void StreamScratch::reset() {
  if (ptr_) {
    // Ordered after every use of the block on its stream, none of which
    // can still be running on another stream (the owners guarantee that).
    ScopedDevice guard;
    if (guard.enter(device_).isOk())
      (void)cudaFreeAsync(ptr_, stream_);
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

Status CublasHandle::create(int device) {
  ScopedDevice guard;
  SHARDLIN_RETURN_IF_ERROR(guard.enter(device));
  SHARDLIN_CUBLAS_RETURN_IF_ERROR(device, cublasCreate(&handle_));
  return Status::ok();
}

CublasHandle::~CublasHandle() {
  if (handle_)
    (void)cublasDestroy(handle_);
}

Status CublasLtHandle::create(int device) {
  ScopedDevice guard;
  SHARDLIN_RETURN_IF_ERROR(guard.enter(device));
  SHARDLIN_CUBLAS_RETURN_IF_ERROR(device, cublasLtCreate(&handle_));
  return Status::ok();
}

CublasLtHandle::~CublasLtHandle() {
  if (handle_)
    (void)cublasLtDestroy(handle_);
}

//===----------------------------------------------------------------------===//
// Waiting
//===----------------------------------------------------------------------===//

double steadySeconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void sleepSeconds(double seconds) {
  if (seconds <= 0) {
    std::this_thread::yield();
    return;
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

Status checkTimeout(double t, double &effective) {
  std::string error = detail::checkTimeoutSeconds(t, effective);
  return error.empty() ? Status::ok() : Status::invalidArgument(error);
}

//===----------------------------------------------------------------------===//
// Argument checks
//===----------------------------------------------------------------------===//

std::string checkDeviceBuffer(const char *name, const void *ptr,
                              int64_t elements, DType dtype, int device,
                              bool pageableOk) {
  if (elements <= 0)
    return {};
  const std::string n(name);
  if (!ptr)
    return n + " is null but " + std::to_string(elements) +
           " elements are to be accessed";
  const size_t es = dtypeSize(dtype);
  if (reinterpret_cast<uintptr_t>(ptr) % es != 0)
    return n + " is not aligned to its " + std::to_string(es) +
           "-byte elements";
  cudaPointerAttributes attr;
  std::memset(&attr, 0, sizeof(attr));
  cudaError_t e = cudaPointerGetAttributes(&attr, ptr);
  if (e != cudaSuccess)
    return n + ": " +
           cudaFailure(e, "cudaPointerGetAttributes", device).message();
  switch (attr.type) {
  case cudaMemoryTypeDevice:
    if (attr.device != device)
      return n + " is memory of cuda:" + std::to_string(attr.device) +
             ", not of this rank's cuda:" + std::to_string(device);
    return {};
  case cudaMemoryTypeManaged:
  case cudaMemoryTypeHost:
    return {};
  case cudaMemoryTypeUnregistered:
    if (pageableOk)
      return {};
    return n + " is host memory that cuda:" + std::to_string(device) +
           " cannot access (pass device memory, e.g. from "
           "createCudaAllocator)";
  }
  return n + " has an unknown CUDA memory type " +
         std::to_string(static_cast<int>(attr.type));
}

Status pageableMemoryAccess(int device, bool &result) {
  int value = 0;
  SHARDLIN_CUDA_RETURN_IF_ERROR(
      device,
      cudaDeviceGetAttribute(&value, cudaDevAttrPageableMemoryAccess, device));
  result = value != 0;
  return Status::ok();
}

} // namespace cuda

//===----------------------------------------------------------------------===//
// Public API (Cuda.h)
//===----------------------------------------------------------------------===//

using namespace cuda;

Status cudaDeviceCount(int &count) {
  count = 0;
  int n = 0;
  SHARDLIN_CUDA_RETURN_IF_ERROR(-1, cudaGetDeviceCount(&n));
  count = n;
  return Status::ok();
}

bool cudaDevicesAvailable(std::string *why) {
  int n = 0;
  Status st = cudaDeviceCount(n);
  if (!st.isOk()) {
    if (why)
      *why = st.message();
    return false;
  }
  if (n == 0) {
    if (why)
      *why = "no CUDA devices";
    return false;
  }
  if (why)
    why->clear();
  return true;
}

std::string describeCudaDevices() {
  std::string why;
  if (!cudaDevicesAvailable(&why))
    return "none (" + why + ")";
  int n = 0;
  Status st = cudaDeviceCount(n);
  if (!st.isOk())
    return "none (" + st.message() + ")";
  std::string s = std::to_string(n) + (n == 1 ? " device: " : " devices: ");
  for (int d = 0; d < n; ++d) {
    cudaDeviceProp prop;
    std::memset(&prop, 0, sizeof(prop));
    s += (d ? ", cuda:" : "cuda:") + std::to_string(d);
    cudaError_t e = cudaGetDeviceProperties(&prop, d);
    if (e != cudaSuccess) {
      s += " (" + cudaFailure(e, "cudaGetDeviceProperties", d).message() + ")";
      continue;
    }
    s += " " + std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
         std::to_string(prop.minor) + ", " +
         std::to_string(prop.totalGlobalMem >> 30) + " GiB)";
  }
  return s;
}

namespace {

Status checkDeviceIndex(int device) {
  int n = 0;
  SHARDLIN_RETURN_IF_ERROR(cudaDeviceCount(n));
  if (device < 0 || device >= n)
    return Status::invalidArgument("cuda:" + std::to_string(device) +
                         " does not exist (" + std::to_string(n) +
                         " CUDA devices)");
  return Status::ok();
}

} // namespace

Status ExecutionStream::create(int device,
                               std::shared_ptr<ExecutionStream> &out) {
  out.reset();
  SHARDLIN_RETURN_IF_ERROR(checkDeviceIndex(device));
  ScopedDevice guard;
  SHARDLIN_RETURN_IF_ERROR(guard.enter(device));
  cudaStream_t s = nullptr;
  // Non-blocking: no implicit ordering with the legacy default stream, which
  // unrelated code (a plain cudaMemcpy elsewhere) would otherwise impose.
  SHARDLIN_CUDA_RETURN_IF_ERROR(
      device, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  out.reset(new ExecutionStream(device, s));
  return Status::ok();
}

ExecutionStream::~ExecutionStream() {
  // cudaStreamDestroy returns at once; work still queued completes first.
  ScopedDevice guard;
  if (guard.enter(device_).isOk())
    (void)cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}

Status ExecutionStream::synchronize() const {
  ScopedDevice guard;
  SHARDLIN_RETURN_IF_ERROR(guard.enter(device_));
  SHARDLIN_CUDA_RETURN_IF_ERROR(
      device_, cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)));
  return Status::ok();
}

namespace {

class CudaAllocator final : public Allocator {
public:
  explicit CudaAllocator(int device) : device_(device) {}
  Device device() const override { return Device{DeviceKind::Cuda, device_}; }

  Status allocate(size_t bytes, void **ptr) override {
    const std::string what = "cudaMalloc of " + std::to_string(bytes) +
                             " bytes on cuda:" + std::to_string(device_);
    if (!ptr)
      return Status::invalidArgument(what + ": null output pointer");
    *ptr = nullptr;
    if (bytes == 0)
      return Status::ok();
    ScopedDevice guard;
    SHARDLIN_RETURN_IF_ERROR(guard.enter(device_).withContext(what));
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess)
      return cudaFailure(e, "cudaMalloc", device_).withContext(what);
    *ptr = p;
    return Status::ok();
  }

  void deallocate(void *ptr) override {
    if (!ptr)
      return;
    // The interface has no way to report a failure here; cudaFree fails
    // only for pointers this allocator did not hand out or after a device
    // error that every later call reports anyway.
    ScopedDevice guard;
    if (guard.enter(device_).isOk())
      (void)cudaFree(ptr);
  }

private:
  int device_;
};

Status copy(const ExecutionStream &stream, void *dst, const void *src,
            size_t bytes, cudaMemcpyKind kind, const char *what) {
  if (bytes == 0)
    return Status::ok();
  if (!dst || !src)
    return Status::invalidArgument(std::string(what) + " of " + std::to_string(bytes) +
                         " bytes: null pointer");
  const int device = stream.device();
  ScopedDevice guard;
  SHARDLIN_RETURN_IF_ERROR(guard.enter(device));
  cudaStream_t s = nativeStream(stream);
  SHARDLIN_CUDA_RETURN_IF_ERROR(device,
                                cudaMemcpyAsync(dst, src, bytes, kind, s));
  SHARDLIN_CUDA_RETURN_IF_ERROR(device, cudaStreamSynchronize(s));
  return Status::ok();
}

} // namespace

Status createCudaAllocator(int device, std::unique_ptr<Allocator> &out) {
  out.reset();
  SHARDLIN_RETURN_IF_ERROR(checkDeviceIndex(device));
  out = std::make_unique<CudaAllocator>(device);
  return Status::ok();
}

Status copyToDevice(const ExecutionStream &stream, void *deviceDst,
                    const void *hostSrc, size_t bytes) {
  return copy(stream, deviceDst, hostSrc, bytes, cudaMemcpyHostToDevice,
              "copyToDevice");
}

Status copyToHost(const ExecutionStream &stream, void *hostDst,
                  const void *deviceSrc, size_t bytes) {
  return copy(stream, hostDst, deviceSrc, bytes, cudaMemcpyDeviceToHost,
              "copyToHost");
}

CudaCommunicator::CudaCommunicator(std::shared_ptr<ExecutionStream> stream)
    : stream_(std::move(stream)) {}

Device CudaCommunicator::device() const {
  return Device{DeviceKind::Cuda, stream_->device()};
}

std::shared_ptr<ExecutionStream> cudaStreamOf(const Communicator &comm) {
  if (auto *c = dynamic_cast<const CudaCommunicator *>(&comm))
    return c->stream();
  return nullptr;
}


} // namespace shardlin::rt
