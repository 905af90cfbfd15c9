// Device code of the CUDA search backend, kept free of CUDA runtime API calls
// so that it compiles both with nvcc (cuda_backend.cu) and, through the
// thread-per-lane shims of native/tools/cuda_emulation.h, with a host C++
// compiler. The emulation lets machines without a GPU check the kernels'
// indexing, synchronisation and selection logic against the CPU backend.
//
// The including file provides: __global__/__device__ qualifiers, threadIdx,
// blockIdx, gridDim, __syncthreads, __syncwarp, __ballot_sync, __ffs, fmaf,
// min, INFINITY, __half and __half2float.
#pragma once

// Dynamic shared memory of a block. A macro because the emulator cannot
// express a per-block `extern __shared__` array.
#ifndef CHRONOQL_DYNAMIC_SHARED
#define CHRONOQL_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "../core/types.h"

namespace chronoql {
namespace cuda_kernels {

// Block shape of the fused scan: 8 warps; lane l of a warp owns rows
// l, l+32, l+64, l+96 of a 128-row tile, warp w owns queries
// w*QPT .. w*QPT+QPT-1 of the block's query tile (QPT = queryTile / 8).
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kRowTile = 128;
constexpr int kRowsPerLane = kRowTile / 32;
// Dimension slice staged in shared memory per step.
constexpr int kDimChunk = 32;

struct DeviceRows {
  const void* rows;
  const RowId* ids;
  const IndexTime* validFrom;
  const IndexTime* validTo;
  const uint8_t* deleted;
  uint32_t rowCount;
  uint32_t dimension;
};

struct DeviceQueries {
  const float* queries;  // prepared, queryCount x dimension
  const IndexTime* asOf;
  const uint32_t* excludeOffsets;  // null when no exclusions
  const RowId* excludeIds;         // sorted per query
  uint32_t queryCount;
  uint32_t k;
};

__device__ __forceinline__ bool ranksBeforeDevice(float scoreA, RowId idA, float scoreB, RowId idB) {
  return scoreA > scoreB || (scoreA == scoreB && idA < idB);
}

__device__ __forceinline__ float loadAsFloat(const float* rows, size_t index) { return rows[index]; }
__device__ __forceinline__ float loadAsFloat(const __half* rows, size_t index) { return __half2float(rows[index]); }

__device__ bool isExcludedDevice(const DeviceQueries& q, uint32_t query, RowId id) {
  if (q.excludeOffsets == nullptr) return false;
  uint32_t lo = q.excludeOffsets[query];
  uint32_t hi = q.excludeOffsets[query + 1];
  while (lo < hi) {
    const uint32_t mid = (lo + hi) / 2;
    const RowId value = q.excludeIds[mid];
    if (value < id) lo = mid + 1;
    else if (value > id) hi = mid;
    else return true;
  }
  return false;
}

// Inserts into a list kept sorted best-first in shared memory. Called by one
// lane at a time (the warp serialises candidates with a ballot loop), and each
// list is owned by a single warp, so no atomics are needed.
__device__ void insertSorted(float* scores, RowId* ids, uint32_t* count, uint32_t k, float score, RowId id) {
  uint32_t n = *count;
  if (n == k && !ranksBeforeDevice(score, id, scores[k - 1], ids[k - 1])) return;
  uint32_t position = n < k ? n : k - 1;
  while (position > 0 && ranksBeforeDevice(score, id, scores[position - 1], ids[position - 1])) {
    scores[position] = scores[position - 1];
    ids[position] = ids[position - 1];
    --position;
  }
  scores[position] = score;
  ids[position] = id;
  if (n < k) *count = n + 1;
}

// Score a candidate must reach (ties decided by id inside insertSorted).
__device__ __forceinline__ float listThreshold(const float* scores, uint32_t count, uint32_t k) {
  return count < k ? -INFINITY : scores[k - 1];
}

template <int QueryTile>
struct ScanSharedLayout {
  static constexpr int kQueriesPerWarp = QueryTile / kWarps;
  // Staged tiles; +1 padding keeps the transposed stores bank-conflict free.
  static constexpr size_t kQueryTileFloats = static_cast<size_t>(kDimChunk) * (QueryTile + 1);
  static constexpr size_t kRowTileFloats = static_cast<size_t>(kDimChunk) * (kRowTile + 1);
  static size_t bytes(uint32_t k) {
    return (kQueryTileFloats + kRowTileFloats) * sizeof(float) + static_cast<size_t>(QueryTile) * k * (sizeof(float) + sizeof(RowId)) +
           QueryTile * sizeof(uint32_t);
  }
};

// grid.x: row blocks (each scans rowsPerBlock consecutive rows), grid.y:
// query tiles. Writes each block's top-k per query to the partial buffers at
// [(query * gridDim.x + blockIdx.x) * k].
template <typename RowT, int QueryTile>
__global__ void __launch_bounds__(kThreads) scanTopKKernel(DeviceRows data, DeviceQueries q, uint32_t rowsPerBlock,
                                                           float* partialScores, RowId* partialIds) {
  using Layout = ScanSharedLayout<QueryTile>;
  constexpr int kQpw = Layout::kQueriesPerWarp;
  CHRONOQL_DYNAMIC_SHARED(float, shared);
  float* queryTile = shared;                                      // [kDimChunk][QueryTile + 1]
  float* rowTile = queryTile + Layout::kQueryTileFloats;          // [kDimChunk][kRowTile + 1]
  float* listScores = rowTile + Layout::kRowTileFloats;           // [QueryTile][k]
  RowId* listIds = reinterpret_cast<RowId*>(listScores + QueryTile * q.k);  // [QueryTile][k]
  uint32_t* listCounts = listIds + QueryTile * q.k;               // [QueryTile]

  const int thread = threadIdx.x;
  const int lane = thread & 31;
  const int warp = thread >> 5;
  const uint32_t firstQuery = blockIdx.y * QueryTile;
  const uint32_t rowBegin = blockIdx.x * rowsPerBlock;
  const uint32_t rowEnd = min(data.rowCount, rowBegin + rowsPerBlock);
  const uint32_t d = data.dimension;
  const RowT* rows = static_cast<const RowT*>(data.rows);

  for (uint32_t i = thread; i < QueryTile * q.k; i += kThreads) {
    listScores[i] = -INFINITY;
    listIds[i] = kNoId;
  }
  for (uint32_t i = thread; i < QueryTile; i += kThreads) listCounts[i] = 0;
  __syncthreads();

  for (uint32_t tileBegin = rowBegin; tileBegin < rowEnd; tileBegin += kRowTile) {
    float acc[kQpw][kRowsPerLane];
#pragma unroll
    for (int t = 0; t < kQpw; ++t)
#pragma unroll
      for (int r = 0; r < kRowsPerLane; ++r) acc[t][r] = 0.0f;

    for (uint32_t dimBegin = 0; dimBegin < d; dimBegin += kDimChunk) {
      // Stage rows: consecutive threads read consecutive elements of a row
      // (coalesced) and store them transposed.
      for (int e = thread; e < kRowTile * kDimChunk; e += kThreads) {
        const int r = e / kDimChunk;
        const int c = e % kDimChunk;
        const uint32_t row = tileBegin + r;
        const uint32_t dim = dimBegin + c;
        rowTile[c * (kRowTile + 1) + r] =
            (row < rowEnd && dim < d) ? loadAsFloat(rows, static_cast<size_t>(row) * d + dim) : 0.0f;
      }
      for (int e = thread; e < QueryTile * kDimChunk; e += kThreads) {
        const int qq = e / kDimChunk;
        const int c = e % kDimChunk;
        const uint32_t query = firstQuery + qq;
        const uint32_t dim = dimBegin + c;
        queryTile[c * (QueryTile + 1) + qq] =
            (query < q.queryCount && dim < d) ? q.queries[static_cast<size_t>(query) * d + dim] : 0.0f;
      }
      __syncthreads();
#pragma unroll 8
      for (int c = 0; c < kDimChunk; ++c) {
        float a[kQpw];
        float b[kRowsPerLane];
#pragma unroll
        for (int t = 0; t < kQpw; ++t) a[t] = queryTile[c * (QueryTile + 1) + warp * kQpw + t];  // broadcast
#pragma unroll
        for (int r = 0; r < kRowsPerLane; ++r) b[r] = rowTile[c * (kRowTile + 1) + lane + 32 * r];
#pragma unroll
        for (int t = 0; t < kQpw; ++t)
#pragma unroll
          for (int r = 0; r < kRowsPerLane; ++r) acc[t][r] = fmaf(a[t], b[r], acc[t][r]);
      }
      __syncthreads();
    }

    // Selection, fused: the warp that owns a query walks its 128 scores; only
    // scores reaching the current k-th score are checked against the time
    // filter, the deleted flag and the exclusion list, and then inserted.
#pragma unroll
    for (int t = 0; t < kQpw; ++t) {
      const int slot = warp * kQpw + t;
      const uint32_t query = firstQuery + slot;
      if (query >= q.queryCount) continue;  // warp-uniform
      const IndexTime asOf = q.asOf[query];
      float* scores = listScores + slot * q.k;
      RowId* ids = listIds + slot * q.k;
      uint32_t* count = listCounts + slot;
#pragma unroll
      for (int r = 0; r < kRowsPerLane; ++r) {
        const uint32_t row = tileBegin + lane + 32 * r;
        const float score = acc[t][r];
        bool candidate = row < rowEnd && score >= listThreshold(scores, *count, q.k);
        RowId id = kNoId;
        if (candidate) {
          id = data.ids[row];
          candidate = data.deleted[row] == 0 && data.validFrom[row] <= asOf && asOf < data.validTo[row] &&
                      !isExcludedDevice(q, query, id);
        }
        unsigned pending = __ballot_sync(0xffffffffu, candidate);
        while (pending != 0) {
          const int source = __ffs(pending) - 1;
          pending &= pending - 1;
          if (lane == source) insertSorted(scores, ids, count, q.k, score, id);
          __syncwarp();
        }
      }
    }
  }
  __syncthreads();

  for (int slot = warp; slot < QueryTile; slot += kWarps) {
    const uint32_t query = firstQuery + slot;
    if (query >= q.queryCount) continue;
    const size_t base = (static_cast<size_t>(query) * gridDim.x + blockIdx.x) * q.k;
    for (uint32_t j = lane; j < q.k; j += 32) {
      partialScores[base + j] = listScores[slot * q.k + j];
      partialIds[base + j] = listIds[slot * q.k + j];
    }
  }
}

// One warp per query merges the per-block lists (already filtered) into the
// final top-k, with the same insertion rule.
__global__ void __launch_bounds__(kThreads) mergeTopKKernel(const float* partialScores, const RowId* partialIds,
                                                            uint32_t listsPerQuery, uint32_t queryCount, uint32_t k,
                                                            RowId* outIds, float* outScores, uint32_t* outCounts) {
  CHRONOQL_DYNAMIC_SHARED(float, shared);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  float* scores = shared + warp * k;
  RowId* ids = reinterpret_cast<RowId*>(shared + kWarps * k) + warp * k;
  uint32_t* counts = reinterpret_cast<uint32_t*>(shared + 2 * kWarps * k);
  const uint32_t query = blockIdx.x * kWarps + warp;
  if (lane == 0) counts[warp] = 0;
  __syncwarp();
  if (query >= queryCount) return;  // whole warp leaves together

  const size_t base = static_cast<size_t>(query) * listsPerQuery * k;
  const uint32_t total = listsPerQuery * k;
  for (uint32_t first = 0; first < total; first += 32) {
    const uint32_t i = first + lane;
    float score = -INFINITY;
    RowId id = kNoId;
    if (i < total) {
      score = partialScores[base + i];
      id = partialIds[base + i];
    }
    const bool candidate = id != kNoId && (counts[warp] < k || ranksBeforeDevice(score, id, scores[k - 1], ids[k - 1]));
    unsigned pending = __ballot_sync(0xffffffffu, candidate);
    while (pending != 0) {
      const int source = __ffs(pending) - 1;
      pending &= pending - 1;
      if (lane == source) insertSorted(scores, ids, &counts[warp], k, score, id);
      __syncwarp();
    }
  }
  const uint32_t count = counts[warp];
  for (uint32_t j = lane; j < k; j += 32) {
    outIds[static_cast<size_t>(query) * k + j] = j < count ? ids[j] : kNoId;
    outScores[static_cast<size_t>(query) * k + j] = j < count ? scores[j] : -INFINITY;
  }
  if (lane == 0) outCounts[query] = count;
}

// Launch geometry of one search, shared by the real backend and the emulator.
struct ScanPlan {
  int queryTile = 8;         // 8 or 32 queries per block
  uint32_t queryTiles = 0;   // grid.y
  uint32_t rowBlocks = 0;    // grid.x
  uint32_t rowsPerBlock = 0;
  size_t scanSharedBytes = 0;
  size_t mergeSharedBytes = 0;
  uint32_t mergeBlocks = 0;
};

// Query tile: 32 queries per block when the batch is large enough and the
// per-query lists fit in shared memory, else 8 (less wasted work at Q=1).
// Row blocks: about four blocks per multiprocessor in total, each scanning a
// contiguous range of whole 128-row tiles. Returns false when even the small
// tile does not fit in `sharedOptIn` bytes.
inline bool planScan(uint32_t rowCount, uint32_t queryCount, uint32_t k, int multiprocessors, int sharedOptIn,
                     ScanPlan& plan) {
  plan.queryTile = queryCount >= 32 ? 32 : 8;
  if (plan.queryTile == 32 && ScanSharedLayout<32>::bytes(k) > static_cast<size_t>(sharedOptIn)) plan.queryTile = 8;
  plan.scanSharedBytes = plan.queryTile == 32 ? ScanSharedLayout<32>::bytes(k) : ScanSharedLayout<8>::bytes(k);
  if (plan.scanSharedBytes > static_cast<size_t>(sharedOptIn)) return false;
  plan.queryTiles = (queryCount + plan.queryTile - 1) / plan.queryTile;
  const uint32_t rowTiles = std::max<uint32_t>(1, (rowCount + kRowTile - 1) / kRowTile);
  const uint32_t targetBlocks = static_cast<uint32_t>(std::max(1, multiprocessors)) * 4;
  uint32_t rowBlocks = std::max<uint32_t>(1, (targetBlocks + plan.queryTiles - 1) / plan.queryTiles);
  rowBlocks = std::min(rowBlocks, rowTiles);
  const uint32_t tilesPerBlock = (rowTiles + rowBlocks - 1) / rowBlocks;
  plan.rowsPerBlock = tilesPerBlock * kRowTile;
  plan.rowBlocks = std::max<uint32_t>(1, (rowCount + plan.rowsPerBlock - 1) / plan.rowsPerBlock);
  plan.mergeSharedBytes = static_cast<size_t>(kWarps) * k * (sizeof(float) + sizeof(RowId)) + kWarps * sizeof(uint32_t);
  plan.mergeBlocks = (queryCount + kWarps - 1) / kWarps;
  return true;
}

}  // namespace cuda_kernels
}  // namespace chronoql
