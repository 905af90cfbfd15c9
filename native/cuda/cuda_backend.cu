// CUDA search backend: the corpus stays resident on the device (fp32 or fp16
// rows, as stored on the host) and one fused kernel scores queries against
// rows tile by tile in shared memory (tensor cores for batches, a streaming
// kernel for one to four queries; search_kernels.cuh) and keeps per-query
// top-k lists there, so the Q x N score matrix is never written to memory. A
// second small kernel merges the per-block lists. Ranking, filters and ties
// follow exactly the CPU rules (types.h: higher score first, equal scores by
// smaller id).
//
// Built only by CMake when nvcc is available; the CUDA runtime is linked
// statically, and every runtime error while probing devices counts as "no
// device", so the addon still loads and falls back to the CPU on machines
// without a GPU or driver.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_backend.h"
#include "search_kernels.cuh"

namespace chronoql {

namespace {

using namespace cuda_kernels;

#define CHRONOQL_CUDA_CHECK(expression)                                                                      \
  do {                                                                                                        \
    const cudaError_t status_ = (expression);                                                                 \
    if (status_ != cudaSuccess) {                                                                             \
      throw std::runtime_error(std::string("CUDA error in ") + #expression + ": " + cudaGetErrorString(status_)); \
    }                                                                                                         \
  } while (0)

// Owning device allocation that only grows.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (pointer_ != nullptr) cudaFree(pointer_);
  }
  void* get() const { return pointer_; }
  size_t bytes() const { return bytes_; }
  void release() {
    if (pointer_ != nullptr) cudaFree(pointer_);
    pointer_ = nullptr;
    bytes_ = 0;
  }
  // Grows to at least `bytes`; keeps the first `preserveBytes` of the old contents.
  void reserve(size_t bytes, size_t preserveBytes = 0) {
    if (bytes <= bytes_) return;
    void* next = nullptr;
    CHRONOQL_CUDA_CHECK(cudaMalloc(&next, bytes));
    if (pointer_ != nullptr) {
      if (preserveBytes != 0) {
        const cudaError_t status = cudaMemcpy(next, pointer_, std::min(preserveBytes, bytes_), cudaMemcpyDeviceToDevice);
        if (status != cudaSuccess) {
          cudaFree(next);
          CHRONOQL_CUDA_CHECK(status);
        }
      }
      cudaFree(pointer_);
    }
    pointer_ = next;
    bytes_ = bytes;
  }

 private:
  void* pointer_ = nullptr;
  size_t bytes_ = 0;
};

struct DeviceProbe {
  std::vector<CudaDeviceInfo> devices;
  std::string reason;
};

const DeviceProbe& probeDevices() {
  static const DeviceProbe probe = [] {
    DeviceProbe result;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      cudaGetLastError();  // clear the sticky error so later calls start clean
      result.reason = std::string("CUDA runtime reports: ") + cudaGetErrorString(status);
      return result;
    }
    if (count == 0) {
      result.reason = "no CUDA device found";
      return result;
    }
    for (int i = 0; i < count; ++i) {
      cudaDeviceProp properties{};
      if (cudaGetDeviceProperties(&properties, i) != cudaSuccess) continue;
      // The build carries sm_80 and sm_90 code; an older GPU would fail every launch.
      if (properties.major < 8) {
        result.reason = std::string(properties.name) + " (compute " + std::to_string(properties.major) + "." +
                        std::to_string(properties.minor) + ") is older than the sm_80 this build targets";
        continue;
      }
      size_t freeBytes = 0;
      size_t totalBytes = 0;
      if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&freeBytes, &totalBytes) != cudaSuccess) cudaGetLastError();
      CudaDeviceInfo info;
      info.index = i;
      info.name = properties.name;
      info.totalMemoryBytes = properties.totalGlobalMem;
      info.freeMemoryBytes = freeBytes;
      info.computeMajor = properties.major;
      info.computeMinor = properties.minor;
      info.multiprocessors = properties.multiProcessorCount;
      result.devices.push_back(info);
    }
    if (result.devices.empty() && result.reason.empty()) result.reason = "CUDA devices could not be queried";
    return result;
  }();
  return probe;
}

// Reads every 16-byte word of `words` once (the bandwidth bound of a Q = 1
// search); the sum is written only in a case that never happens, so the
// reads cannot be optimised away.
__global__ void streamReadKernel(const uint4* words, size_t count, unsigned* sink) {
  unsigned sum = 0;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint4 word = words[i];
    sum ^= word.x ^ word.y ^ word.z ^ word.w;
  }
  if (sum == 0x9e3779b9u) *sink = sum;
}

// Device rows grow by half again when they outgrow their buffer (a first
// upload takes exactly the rows), so appends do not copy the mirror each time.
uint32_t mirrorCapacity(uint32_t rowCount, uint32_t capacity) {
  return rowCount <= capacity ? capacity : std::max<uint32_t>(rowCount, capacity + capacity / 2);
}

// Per row besides its vector: id, validFrom, validTo (4 bytes each), deleted (1).
constexpr size_t kMetadataBytesPerRow = 13;

class CudaSearchBackend final : public SearchBackend {
 public:
  explicit CudaSearchBackend(int device) : device_(device) {
    CHRONOQL_CUDA_CHECK(cudaSetDevice(device_));
    cudaDeviceProp properties{};
    CHRONOQL_CUDA_CHECK(cudaGetDeviceProperties(&properties, device_));
    limits_.multiprocessors = properties.multiProcessorCount;
    limits_.sharedPerBlock = properties.sharedMemPerBlockOptin;
    limits_.sharedPerMultiprocessor = properties.sharedMemPerMultiprocessor;
    CHRONOQL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }

  ~CudaSearchBackend() override {
    if (stream_ != nullptr) {
      cudaSetDevice(device_);
      cudaStreamDestroy(stream_);
    }
  }

  std::string name() const override { return "cuda"; }
  uint32_t maxK() const override { return kCudaMaxK; }
  size_t deviceMemoryBytes() const override { return deviceBytes_.load(std::memory_order_relaxed); }

  size_t deviceBytesFor(uint32_t rowCount, size_t rowBytes) const override {
    const size_t rows = mirrorCapacity(rowCount, capacityRows_.load(std::memory_order_relaxed));
    return rows * (rowBytes + kMetadataBytesPerRow) + workspaceBytes_.load(std::memory_order_relaxed);
  }

  void releaseDeviceMemory() override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (deviceBytes_.load(std::memory_order_relaxed) == 0) return;
    CHRONOQL_CUDA_CHECK(cudaSetDevice(device_));
    for (DeviceBuffer* buffer : allBuffers()) buffer->release();
    capacityRows_.store(0, std::memory_order_relaxed);
    uploadedRows_ = 0;
    uploadedMetadataVersion_ = std::numeric_limits<uint64_t>::max();
    range_ = RowRange{};
    updateDeviceBytes();
  }

  double measureStreamSeconds(const FlatVectorStore& store) override {
    std::lock_guard<std::mutex> lock(mutex_);
    CHRONOQL_CUDA_CHECK(cudaSetDevice(device_));
    synchronise(store);
    const size_t bytes = static_cast<size_t>(store.rowCount()) * store.rowBytes();
    if (bytes < sizeof(uint4)) return 0.0;
    sink_.reserve(sizeof(unsigned));
    updateDeviceBytes();
    cudaEvent_t start = nullptr, stop = nullptr;
    CHRONOQL_CUDA_CHECK(cudaEventCreate(&start));
    CHRONOQL_CUDA_CHECK(cudaEventCreate(&stop));
    float best = std::numeric_limits<float>::infinity();
    const unsigned blocks = static_cast<unsigned>(limits_.multiprocessors) * 8;
    for (int round = 0; round < 4; ++round) {  // the first round warms up
      cudaEventRecord(start, stream_);
      streamReadKernel<<<blocks, kThreads, 0, stream_>>>(static_cast<const uint4*>(rows_.get()), bytes / sizeof(uint4),
                                                         static_cast<unsigned*>(sink_.get()));
      cudaEventRecord(stop, stream_);
      const cudaError_t status = cudaEventSynchronize(stop);
      float milliseconds = 0.0f;
      if (status == cudaSuccess) cudaEventElapsedTime(&milliseconds, start, stop);
      if (status != cudaSuccess || cudaGetLastError() != cudaSuccess) {
        cudaEventDestroy(start);
        cudaEventDestroy(stop);
        CHRONOQL_CUDA_CHECK(status);
        throw std::runtime_error("CUDA error in the stream kernel");
      }
      if (round > 0) best = std::min(best, milliseconds);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return best / 1000.0;
  }

  void search(const FlatVectorStore& store, const SearchRequest& request, SearchResults& results) override {
    results.reset(request.queryCount, request.k);
    if (request.queryCount == 0 || request.k == 0) return;
    if (request.k > kCudaMaxK) throw std::invalid_argument("k: the CUDA backend serves k <= " + std::to_string(kCudaMaxK));
    // One search at a time per index on the device: the mirror and the
    // workspace are shared, and a batch already fills the GPU.
    std::lock_guard<std::mutex> lock(mutex_);
    CHRONOQL_CUDA_CHECK(cudaSetDevice(device_));
    synchronise(store);
    if (store.rowCount() == 0) return;

    const uint32_t queryCount = request.queryCount;
    const uint32_t k = request.k;
    const uint32_t d = store.dimension();
    const bool half = store.storage() == Storage::Fp16;

    const TensorQueryBatch tensorQueries = prepareTensorQueries(request.queries, queryCount, d, half, range_);
    SearchPlan plan;
    if (!planSearch(store.rowCount(), d, queryCount, k, rowsFitHalf(range_) && tensorQueries.representable, limits_, plan)) {
      throw std::runtime_error("k too large for this device's shared memory");
    }
    if (plan.gridY > 65535) throw std::invalid_argument("queries: too many for one CUDA launch");
    const bool tensor = plan.kernel == ScanKernel::Tensor;

    // Workspace.
    const size_t queryBytes = static_cast<size_t>(queryCount) * d * sizeof(float);
    const size_t partialCount = static_cast<size_t>(queryCount) * plan.listsPerQuery * k;
    const size_t excludeCount = request.excludeOffsets != nullptr ? request.excludeOffsets[queryCount] : 0;
    queries_.reserve(queryBytes);
    if (tensor) {
      halfQueries_.reserve(tensorQueries.halves.size() * sizeof(uint16_t));
      margins_.reserve(queryCount * sizeof(float));
    }
    asOf_.reserve(queryCount * sizeof(IndexTime));
    excludeOffsets_.reserve((queryCount + 1) * sizeof(uint32_t));
    excludeIds_.reserve(std::max<size_t>(1, excludeCount) * sizeof(RowId));
    partialScores_.reserve(partialCount * sizeof(float));
    partialIds_.reserve(partialCount * sizeof(RowId));
    outIds_.reserve(static_cast<size_t>(queryCount) * k * sizeof(RowId));
    outScores_.reserve(static_cast<size_t>(queryCount) * k * sizeof(float));
    outCounts_.reserve(queryCount * sizeof(uint32_t));
    updateDeviceBytes();

    CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(queries_.get(), request.queries, queryBytes, cudaMemcpyHostToDevice, stream_));
    if (tensor) {
      CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(halfQueries_.get(), tensorQueries.halves.data(), tensorQueries.halves.size() * sizeof(uint16_t),
                                          cudaMemcpyHostToDevice, stream_));
      CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(margins_.get(), tensorQueries.margins.data(), queryCount * sizeof(float),
                                          cudaMemcpyHostToDevice, stream_));
    }
    CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(asOf_.get(), request.asOf, queryCount * sizeof(IndexTime), cudaMemcpyHostToDevice, stream_));
    if (request.excludeOffsets != nullptr) {
      CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(excludeOffsets_.get(), request.excludeOffsets, (queryCount + 1) * sizeof(uint32_t),
                                          cudaMemcpyHostToDevice, stream_));
      if (excludeCount != 0) {
        CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(excludeIds_.get(), request.excludeIds, excludeCount * sizeof(RowId),
                                            cudaMemcpyHostToDevice, stream_));
      }
    }

    DeviceRows data{rows_.get(),
                    static_cast<const RowId*>(ids_.get()),
                    static_cast<const IndexTime*>(validFrom_.get()),
                    static_cast<const IndexTime*>(validTo_.get()),
                    static_cast<const uint8_t*>(deleted_.get()),
                    store.rowCount(),
                    d};
    DeviceQueries deviceQueries{static_cast<const float*>(queries_.get()),
                                tensor ? static_cast<const __half*>(halfQueries_.get()) : nullptr,
                                tensor ? static_cast<const float*>(margins_.get()) : nullptr,
                                tensorQueries.paddedDimension,
                                static_cast<const IndexTime*>(asOf_.get()),
                                request.excludeOffsets != nullptr ? static_cast<const uint32_t*>(excludeOffsets_.get()) : nullptr,
                                static_cast<const RowId*>(excludeIds_.get()),
                                queryCount,
                                k};
    launchSearch([this](auto kernel, uint32_t gridX, uint32_t gridY, size_t sharedBytes, auto... arguments) { launch(kernel, gridX, gridY, sharedBytes, arguments...); },
                 plan, half, data, deviceQueries, static_cast<float*>(partialScores_.get()), static_cast<RowId*>(partialIds_.get()),
                 static_cast<RowId*>(outIds_.get()), static_cast<float*>(outScores_.get()), static_cast<uint32_t*>(outCounts_.get()));

    CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(results.ids.data(), outIds_.get(), results.ids.size() * sizeof(RowId),
                                        cudaMemcpyDeviceToHost, stream_));
    CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(results.scores.data(), outScores_.get(), results.scores.size() * sizeof(float),
                                        cudaMemcpyDeviceToHost, stream_));
    CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(results.counts.data(), outCounts_.get(), queryCount * sizeof(uint32_t),
                                        cudaMemcpyDeviceToHost, stream_));
    CHRONOQL_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  template <typename... Params, typename... Args>
  void launch(void (*kernel)(Params...), uint32_t gridX, uint32_t gridY, size_t sharedBytes, Args... arguments) {
    if (sharedBytes > 48 * 1024) {
      CHRONOQL_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(sharedBytes)));
    }
    kernel<<<dim3(gridX, gridY), kThreads, sharedBytes, stream_>>>(arguments...);
    CHRONOQL_CUDA_CHECK(cudaGetLastError());
  }

  // Brings the device mirror up to date with the host store: appends rows
  // added since the last search (and folds them into the row range), and
  // refreshes validTo/deleted after remove()/invalidate() (ids and validFrom
  // never change for a row).
  void synchronise(const FlatVectorStore& store) {
    const uint32_t rowCount = store.rowCount();
    const size_t rowBytes = store.rowBytes();
    if (rowCount == 0) return;  // nothing to mirror (and no zero-byte copies from null buffers)
    const uint32_t held = capacityRows_.load(std::memory_order_relaxed);
    if (rowCount > held) {
      const uint32_t capacity = mirrorCapacity(rowCount, held);
      rows_.reserve(static_cast<size_t>(capacity) * rowBytes, static_cast<size_t>(uploadedRows_) * rowBytes);
      ids_.reserve(capacity * sizeof(RowId), uploadedRows_ * sizeof(RowId));
      validFrom_.reserve(capacity * sizeof(IndexTime), uploadedRows_ * sizeof(IndexTime));
      validTo_.reserve(capacity * sizeof(IndexTime), uploadedRows_ * sizeof(IndexTime));
      deleted_.reserve(capacity, uploadedRows_);
      capacityRows_.store(capacity, std::memory_order_relaxed);
      updateDeviceBytes();
    }
    if (rowCount > uploadedRows_) {
      const uint32_t first = uploadedRows_;
      for (const RowChunk& chunk : store.chunks()) {
        const uint32_t chunkEnd = chunk.firstRow + chunk.rows;
        if (chunkEnd <= first) continue;
        const uint32_t from = std::max(first, chunk.firstRow);
        const size_t count = chunkEnd - from;
        CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(rows_.get()) + static_cast<size_t>(from) * rowBytes,
                                            static_cast<const char*>(chunk.data.get()) + static_cast<size_t>(from - chunk.firstRow) * rowBytes,
                                            count * rowBytes, cudaMemcpyHostToDevice, stream_));
      }
      const size_t n = rowCount - first;
      CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(static_cast<RowId*>(ids_.get()) + first, store.ids() + first, n * sizeof(RowId),
                                          cudaMemcpyHostToDevice, stream_));
      CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(static_cast<IndexTime*>(validFrom_.get()) + first, store.validFrom() + first, n * sizeof(IndexTime),
                                          cudaMemcpyHostToDevice, stream_));
      foldRowRange(store, first, static_cast<uint32_t>(n));
    }
    if (rowCount > uploadedRows_ || store.metadataVersion() != uploadedMetadataVersion_) {
      // validTo and deleted may have changed anywhere; they are 5 bytes a row.
      CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(validTo_.get(), store.validTo(), rowCount * sizeof(IndexTime), cudaMemcpyHostToDevice, stream_));
      CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(deleted_.get(), store.deleted(), rowCount, cudaMemcpyHostToDevice, stream_));
      uploadedMetadataVersion_ = store.metadataVersion();
    }
    CHRONOQL_CUDA_CHECK(cudaStreamSynchronize(stream_));  // host buffers may change once the lock is released
    if (rowCount > uploadedRows_) {
      std::memcpy(&range_.normSquared, &rangeHost_[0], sizeof(float));
      std::memcpy(&range_.largestMagnitude, &rangeHost_[1], sizeof(float));
    }
    uploadedRows_ = rowCount;
  }

  // Largest squared norm and magnitude over the rows uploaded so far, with
  // rows [first, first + count) added; read back by synchronise().
  void foldRowRange(const FlatVectorStore& store, uint32_t first, uint32_t count) {
    if (first == 0) {
      rangeDevice_.reserve(2 * sizeof(unsigned));
      CHRONOQL_CUDA_CHECK(cudaMemsetAsync(rangeDevice_.get(), 0, 2 * sizeof(unsigned), stream_));
    }
    const unsigned blocks = (count + kThreads - 1) / kThreads;
    auto* maxima = static_cast<unsigned*>(rangeDevice_.get());
    if (store.storage() == Storage::Fp16) {
      launch(rowRangeKernel<__half>, blocks, 1, 0, static_cast<const __half*>(rows_.get()), first, count, store.dimension(), maxima);
    } else {
      launch(rowRangeKernel<float>, blocks, 1, 0, static_cast<const float*>(rows_.get()), first, count, store.dimension(), maxima);
    }
    CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(rangeHost_, maxima, sizeof rangeHost_, cudaMemcpyDeviceToHost, stream_));
  }

  std::vector<DeviceBuffer*> allBuffers() {
    return {&rows_,    &ids_,           &validFrom_,     &validTo_,       &deleted_,       &rangeDevice_, &queries_,
            &halfQueries_, &margins_,   &asOf_,          &excludeOffsets_, &excludeIds_,   &partialScores_, &partialIds_,
            &outIds_,  &outScores_,     &outCounts_,     &sink_};
  }

  void updateDeviceBytes() {
    size_t total = 0;
    for (const DeviceBuffer* buffer : allBuffers()) total += buffer->bytes();
    const size_t mirror = rows_.bytes() + ids_.bytes() + validFrom_.bytes() + validTo_.bytes() + deleted_.bytes();
    deviceBytes_.store(total, std::memory_order_relaxed);
    workspaceBytes_.store(total - mirror, std::memory_order_relaxed);
  }

  int device_;
  DeviceLimits limits_;
  cudaStream_t stream_ = nullptr;
  std::mutex mutex_;
  std::atomic<size_t> deviceBytes_{0};
  std::atomic<size_t> workspaceBytes_{0};

  std::atomic<uint32_t> capacityRows_{0};
  uint32_t uploadedRows_ = 0;
  uint64_t uploadedMetadataVersion_ = std::numeric_limits<uint64_t>::max();
  RowRange range_;
  unsigned rangeHost_[2] = {0, 0};
  DeviceBuffer rows_, ids_, validFrom_, validTo_, deleted_, rangeDevice_;
  DeviceBuffer queries_, halfQueries_, margins_, asOf_, excludeOffsets_, excludeIds_;
  DeviceBuffer partialScores_, partialIds_, outIds_, outScores_, outCounts_, sink_;
};

}  // namespace

bool cudaCompiledIn() { return true; }

std::vector<CudaDeviceInfo> cudaDevices() { return probeDevices().devices; }

std::string cudaUnavailableReason() {
  const DeviceProbe& probe = probeDevices();
  return probe.devices.empty() ? probe.reason : std::string();
}

CudaMemory cudaDeviceMemory(int deviceIndex) {
  const DeviceProbe& probe = probeDevices();
  CudaMemory memory;
  if (deviceIndex < 0 || deviceIndex >= static_cast<int>(probe.devices.size())) return memory;
  int current = 0;
  if (cudaGetDevice(&current) != cudaSuccess) current = probe.devices[deviceIndex].index;
  if (cudaSetDevice(probe.devices[deviceIndex].index) != cudaSuccess ||
      cudaMemGetInfo(&memory.freeBytes, &memory.totalBytes) != cudaSuccess) {
    cudaGetLastError();
    memory = CudaMemory{};
  }
  cudaSetDevice(current);
  return memory;
}

std::unique_ptr<SearchBackend> createCudaSearchBackend(int deviceIndex) {
  const DeviceProbe& probe = probeDevices();
  if (probe.devices.empty()) throw std::runtime_error("CUDA was requested but no device is usable: " + probe.reason);
  if (deviceIndex < 0 || deviceIndex >= static_cast<int>(probe.devices.size())) {
    throw std::runtime_error("CUDA device index " + std::to_string(deviceIndex) + " does not exist");
  }
  return std::make_unique<CudaSearchBackend>(probe.devices[deviceIndex].index);
}

}  // namespace chronoql
