// CUDA search backend: the corpus stays resident on the device (fp32 or fp16
// rows, as stored on the host) and one fused kernel computes query-row scores
// tile by tile in shared memory and keeps a per-query top-k list per block, so
// the Q x N score matrix is never written to memory. A second small kernel
// merges the per-block lists. Ranking, filters and ties follow exactly the CPU
// rules (types.h: higher score first, equal scores by smaller id).
//
// Built only by CMake when nvcc is available; the CUDA runtime is linked
// statically, and every runtime error while probing devices counts as "no
// device", so the addon still loads and falls back to the CPU on machines
// without a GPU or driver.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

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

class CudaSearchBackend final : public SearchBackend {
 public:
  explicit CudaSearchBackend(int device) : device_(device) {
    CHRONOQL_CUDA_CHECK(cudaSetDevice(device_));
    cudaDeviceProp properties{};
    CHRONOQL_CUDA_CHECK(cudaGetDeviceProperties(&properties, device_));
    multiprocessors_ = properties.multiProcessorCount;
    sharedOptIn_ = properties.sharedMemPerBlockOptin;
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

    ScanPlan plan;
    if (!planScan(store.rowCount(), queryCount, k, multiprocessors_, sharedOptIn_, plan)) {
      throw std::runtime_error("k too large for this device's shared memory");
    }
    if (plan.queryTiles > 65535) throw std::invalid_argument("queries: too many for one CUDA launch");
    const uint32_t rowBlocks = plan.rowBlocks;
    const size_t sharedBytes = plan.scanSharedBytes;

    // Workspace.
    const size_t queryBytes = static_cast<size_t>(queryCount) * d * sizeof(float);
    const size_t partialCount = static_cast<size_t>(queryCount) * rowBlocks * k;
    const size_t excludeCount = request.excludeOffsets != nullptr ? request.excludeOffsets[queryCount] : 0;
    queries_.reserve(queryBytes);
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
    DeviceQueries deviceQueries{static_cast<const float*>(queries_.get()), static_cast<const IndexTime*>(asOf_.get()),
                                request.excludeOffsets != nullptr ? static_cast<const uint32_t*>(excludeOffsets_.get()) : nullptr,
                                static_cast<const RowId*>(excludeIds_.get()), queryCount, k};
    const dim3 grid(rowBlocks, plan.queryTiles);
    auto* partialScores = static_cast<float*>(partialScores_.get());
    auto* partialIds = static_cast<RowId*>(partialIds_.get());
    const uint32_t rowsPerBlock = plan.rowsPerBlock;
    if (plan.queryTile == 32) {
      if (half) launchScan<__half, 32>(grid, sharedBytes, data, deviceQueries, rowsPerBlock, partialScores, partialIds);
      else launchScan<float, 32>(grid, sharedBytes, data, deviceQueries, rowsPerBlock, partialScores, partialIds);
    } else {
      if (half) launchScan<__half, 8>(grid, sharedBytes, data, deviceQueries, rowsPerBlock, partialScores, partialIds);
      else launchScan<float, 8>(grid, sharedBytes, data, deviceQueries, rowsPerBlock, partialScores, partialIds);
    }

    const size_t mergeShared = plan.mergeSharedBytes;
    if (mergeShared > 48 * 1024) {
      CHRONOQL_CUDA_CHECK(cudaFuncSetAttribute(mergeTopKKernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(mergeShared)));
    }
    mergeTopKKernel<<<plan.mergeBlocks, kThreads, mergeShared, stream_>>>(
        partialScores, partialIds, rowBlocks, queryCount, k, static_cast<RowId*>(outIds_.get()),
        static_cast<float*>(outScores_.get()), static_cast<uint32_t*>(outCounts_.get()));
    CHRONOQL_CUDA_CHECK(cudaGetLastError());

    CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(results.ids.data(), outIds_.get(), results.ids.size() * sizeof(RowId),
                                        cudaMemcpyDeviceToHost, stream_));
    CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(results.scores.data(), outScores_.get(), results.scores.size() * sizeof(float),
                                        cudaMemcpyDeviceToHost, stream_));
    CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(results.counts.data(), outCounts_.get(), queryCount * sizeof(uint32_t),
                                        cudaMemcpyDeviceToHost, stream_));
    CHRONOQL_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  template <typename RowT, int QueryTile>
  void launchScan(dim3 grid, size_t sharedBytes, const DeviceRows& data, const DeviceQueries& queries, uint32_t rowsPerBlock,
                  float* partialScores, RowId* partialIds) {
    if (sharedBytes > 48 * 1024) {
      CHRONOQL_CUDA_CHECK(cudaFuncSetAttribute(scanTopKKernel<RowT, QueryTile>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               static_cast<int>(sharedBytes)));
    }
    scanTopKKernel<RowT, QueryTile><<<grid, kThreads, sharedBytes, stream_>>>(data, queries, rowsPerBlock, partialScores,
                                                                              partialIds);
    CHRONOQL_CUDA_CHECK(cudaGetLastError());
  }

  // Brings the device mirror up to date with the host store: appends rows
  // added since the last search, and refreshes validTo/deleted after
  // remove()/invalidate() (ids and validFrom never change for a row).
  void synchronise(const FlatVectorStore& store) {
    const uint32_t rowCount = store.rowCount();
    const size_t rowBytes = store.rowBytes();
    if (rowCount == 0) return;  // nothing to mirror (and no zero-byte copies from null buffers)
    if (rowCount > capacityRows_) {
      const uint32_t capacity = std::max<uint32_t>(rowCount, capacityRows_ + capacityRows_ / 2);
      rows_.reserve(static_cast<size_t>(capacity) * rowBytes, static_cast<size_t>(uploadedRows_) * rowBytes);
      ids_.reserve(capacity * sizeof(RowId), uploadedRows_ * sizeof(RowId));
      validFrom_.reserve(capacity * sizeof(IndexTime), uploadedRows_ * sizeof(IndexTime));
      validTo_.reserve(capacity * sizeof(IndexTime), uploadedRows_ * sizeof(IndexTime));
      deleted_.reserve(capacity, uploadedRows_);
      capacityRows_ = capacity;
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
    }
    if (rowCount > uploadedRows_ || store.metadataVersion() != uploadedMetadataVersion_) {
      // validTo and deleted may have changed anywhere; they are 5 bytes a row.
      CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(validTo_.get(), store.validTo(), rowCount * sizeof(IndexTime), cudaMemcpyHostToDevice, stream_));
      CHRONOQL_CUDA_CHECK(cudaMemcpyAsync(deleted_.get(), store.deleted(), rowCount, cudaMemcpyHostToDevice, stream_));
      uploadedMetadataVersion_ = store.metadataVersion();
    }
    CHRONOQL_CUDA_CHECK(cudaStreamSynchronize(stream_));  // host buffers may change once the lock is released
    uploadedRows_ = rowCount;
  }

  void updateDeviceBytes() {
    size_t total = 0;
    for (const DeviceBuffer* buffer : {&rows_, &ids_, &validFrom_, &validTo_, &deleted_, &queries_, &asOf_, &excludeOffsets_,
                                       &excludeIds_, &partialScores_, &partialIds_, &outIds_, &outScores_, &outCounts_}) {
      total += buffer->bytes();
    }
    deviceBytes_.store(total, std::memory_order_relaxed);
  }

  int device_;
  int multiprocessors_ = 1;
  int sharedOptIn_ = 48 * 1024;
  cudaStream_t stream_ = nullptr;
  std::mutex mutex_;
  std::atomic<size_t> deviceBytes_{0};

  uint32_t capacityRows_ = 0;
  uint32_t uploadedRows_ = 0;
  uint64_t uploadedMetadataVersion_ = std::numeric_limits<uint64_t>::max();
  DeviceBuffer rows_, ids_, validFrom_, validTo_, deleted_;
  DeviceBuffer queries_, asOf_, excludeOffsets_, excludeIds_;
  DeviceBuffer partialScores_, partialIds_, outIds_, outScores_, outCounts_;
};

}  // namespace

bool cudaCompiledIn() { return true; }

std::vector<CudaDeviceInfo> cudaDevices() { return probeDevices().devices; }

std::string cudaUnavailableReason() {
  const DeviceProbe& probe = probeDevices();
  return probe.devices.empty() ? probe.reason : std::string();
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
