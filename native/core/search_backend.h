// The index interface split (as in FAISS): FlatVectorStore owns the data, a
// SearchBackend scans it. CpuSearchBackend and CudaSearchBackend implement the
// same contract, so callers and tests can swap them freely.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simd.h"
#include "types.h"
#include "vector_store.h"

namespace chronoql {

struct SearchRequest {
  // queryCount x dimension, row-major, already prepared for the metric
  // (unit length for cosine, or a blended ARR query that must not be rescaled).
  const float* queries = nullptr;
  uint32_t queryCount = 0;
  uint32_t k = 0;
  // One day per query: a row is a candidate iff validFrom <= asOf < validTo.
  const IndexTime* asOf = nullptr;
  // Optional CSR lists of ids to skip: query q excludes
  // excludeIds[excludeOffsets[q] .. excludeOffsets[q+1]), sorted ascending.
  const uint32_t* excludeOffsets = nullptr;
  const RowId* excludeIds = nullptr;
  // CPU inner loop to use (the CPU backend only).
  CpuKernel cpuKernel = CpuKernel::Scalar;
};

// Dense result block: query q's hits are ids/scores[q*k .. q*k + counts[q]),
// best first; unused slots hold kNoId / -inf.
struct SearchResults {
  uint32_t queryCount = 0;
  uint32_t k = 0;
  std::vector<RowId> ids;
  std::vector<float> scores;
  std::vector<uint32_t> counts;

  void reset(uint32_t queries, uint32_t perQuery);
};

class SearchBackend {
 public:
  virtual ~SearchBackend() = default;
  virtual std::string name() const = 0;
  // Caller holds the store's shared lock for the duration of the call.
  virtual void search(const FlatVectorStore& store, const SearchRequest& request, SearchResults& results) = 0;
  // Largest k the backend serves itself (larger requests go to the CPU).
  virtual uint32_t maxK() const { return kMaxK; }
  // Bytes held on an accelerator (device mirror and workspace), 0 on the CPU.
  virtual size_t deviceMemoryBytes() const { return 0; }
  // Bytes an accelerator would hold to search `rowCount` rows of `rowBytes`
  // (its mirror as it would grow, plus its workspace), 0 on the CPU.
  virtual size_t deviceBytesFor(uint32_t rowCount, size_t rowBytes) const { return 0; }
  // Frees what the accelerator holds (the next search uploads again).
  virtual void releaseDeviceMemory() {}
  // Seconds to read every stored row once from the memory this backend
  // searches (caller holds the store's shared lock).
  virtual double measureStreamSeconds(const FlatVectorStore& store);
};

// True when `id` is on query q's exclusion list (binary search, called only
// for the few rows that beat a query's current k-th score).
inline bool isExcluded(const SearchRequest& request, uint32_t query, RowId id) {
  if (request.excludeOffsets == nullptr) return false;
  const RowId* first = request.excludeIds + request.excludeOffsets[query];
  const RowId* last = request.excludeIds + request.excludeOffsets[query + 1];
  while (first < last) {
    const RowId* mid = first + (last - first) / 2;
    if (*mid < id) first = mid + 1;
    else if (*mid > id) last = mid;
    else return true;
  }
  return false;
}

}  // namespace chronoql
