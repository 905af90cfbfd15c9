// VectorIndex ties a FlatVectorStore to the backend that scans it (CPU, or
// CUDA when a device is present), prepares queries for the metric, and
// persists the store. It is the object the N-API layer and the C++ harnesses
// use; it knows nothing about JavaScript.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "search_backend.h"
#include "simd.h"
#include "vector_store.h"

namespace chronoql {

enum class DevicePreference { Auto, Cpu, Cuda };

// Where one search runs: on the index's accelerator when it has one, or on
// the host (the caller decided the index does not fit the device).
enum class SearchPlacement { Preferred, Host };

// What an index on an accelerator holds there and would need for its rows.
struct DeviceFootprint {
  size_t requiredBytes = 0;
  size_t heldBytes = 0;
};

class VectorIndex {
 public:
  VectorIndex(uint32_t dimension, Storage storage, Metric metric, DevicePreference device);

  FlatVectorStore& store() { return store_; }
  const FlatVectorStore& store() const { return store_; }
  uint32_t dimension() const { return store_.dimension(); }
  // "cpu" or "cuda": where searches run.
  std::string backendName() const { return primary_->name(); }

  // Mutations take the store's exclusive lock.
  void add(const RowId* ids, const float* vectors, const IndexTime* validFrom, const IndexTime* validTo, size_t count);
  size_t remove(const RowId* ids, size_t count);
  size_t invalidate(const RowId* ids, const IndexTime* validTo, size_t count);

  // Exact top-k per query. `queries` are raw (normalised here for cosine).
  // `excludeOffsets`/`excludeIds` form optional CSR lists in any order.
  // `kernel` picks the CPU inner loop; the addon reads it on the JS thread
  // (activeCpuKernel() looks at the environment, which only that thread may
  // change).
  SearchResults search(const float* queries, uint32_t queryCount, uint32_t k, const IndexTime* asOf,
                       const uint32_t* excludeOffsets, const RowId* excludeIds,
                       CpuKernel kernel = activeCpuKernel(), SearchPlacement placement = SearchPlacement::Preferred) const;

  // Adaptive re-retrieval in one scan: for each query the score of a row is
  // (1-w)*sim(first, row) + w*sim(second, row). Both metrics are linear in the
  // query once the queries are prepared (unit length for cosine), so this is
  // one search with the blended query instead of two scans and a merge.
  SearchResults searchBlended(const float* firstQueries, const float* secondQueries, const float* weights,
                              uint32_t queryCount, uint32_t k, const IndexTime* asOf, const uint32_t* excludeOffsets,
                              const RowId* excludeIds, CpuKernel kernel = activeCpuKernel(),
                              SearchPlacement placement = SearchPlacement::Preferred) const;

  // Live rows and host bytes as of the last completed mutation. Read without
  // taking the lock so the JS thread never waits behind a running search/add.
  size_t size() const { return liveRows_.load(std::memory_order_acquire); }
  size_t memoryBytes() const { return memoryBytes_.load(std::memory_order_acquire); }
  size_t deviceMemoryBytes() const;
  // Device bytes held now and needed for the rows as of the last mutation
  // (zeros without an accelerator); read without the lock, like size().
  DeviceFootprint deviceFootprint() const;
  // Seconds to read all stored rows once from the memory searches read (the
  // device's when the index is on one): the bandwidth bound of one query.
  double measureStreamSeconds() const;

  // Writes live rows only (deleted rows are dropped) to a temporary file that
  // is renamed over `path`, so a crash never leaves a half-written index.
  void save(const std::string& path) const;
  static std::unique_ptr<VectorIndex> load(const std::string& path, DevicePreference device);

 private:
  SearchResults runPrepared(const std::vector<float>& prepared, uint32_t queryCount, uint32_t k, const IndexTime* asOf,
                            const uint32_t* excludeOffsets, const RowId* excludeIds, CpuKernel kernel,
                            SearchPlacement placement) const;
  void prepareQuery(const float* raw, float* prepared, uint32_t index) const;
  void publishCounters();  // caller holds the exclusive lock

  FlatVectorStore store_;
  std::unique_ptr<SearchBackend> cpu_;
  std::unique_ptr<SearchBackend> accelerator_;  // null on CPU
  SearchBackend* primary_;
  std::atomic<size_t> liveRows_{0};
  std::atomic<uint32_t> rowCount_{0};
  std::atomic<size_t> memoryBytes_{0};
};

}  // namespace chronoql
