// Device code of the CUDA search backend, kept free of CUDA runtime API calls
// so that it compiles both with nvcc (cuda_backend.cu) and, through the
// thread-per-lane shims of native/tools/cuda_emulation.h, with a host C++
// compiler. The emulation lets machines without a GPU check the kernels'
// indexing, synchronisation and selection logic against the CPU backend.
//
// The including file provides: __global__/__device__/__host__ qualifiers,
// threadIdx, blockIdx, gridDim, __syncthreads, __syncwarp, __ballot_sync,
// __any_sync, __shfl_xor_sync, __reduce_max_sync, __ffs, __ffsll, atomicAdd,
// atomicMax, __float_as_uint, fmaf, min, INFINITY, uint4, float4, float2,
// __half, __half2 and their conversions, and nvcuda::wmma.
//
// Three scan kernels, chosen per search by planSearch():
//   - streamTopKKernel (Q <= 4): memory-bound; 8 lanes read a row with
//     16-byte loads, so a row is read once at close to the bandwidth and fp16
//     rows take half the time of fp32 ones.
//   - tensorScanTopKKernel (larger Q): scores a tile of queries x 128 rows on
//     the tensor cores (fp16 inputs, fp32 accumulation) into shared memory,
//     then filters and selects there. fp32 rows are converted to fp16 as they
//     are staged. A tensor score is within a bound (tensorScoreMargin) of the
//     exact fp32 score, so only rows within that bound of a query's k-th
//     score are scored again exactly and ranked by the exact score: results
//     are those of an exact fp32 scan.
//   - scanTopKKernel: fp32 FMAs on the CUDA cores; serves what fp16 cannot
//     represent (values of 65504 or more).
// Each keeps per-query top-k lists in shared memory and writes one list per
// block (or warp) and query; mergeTopKKernel merges them. The Q x N score
// matrix is never written to global memory.
#pragma once

// Dynamic shared memory of a block. A macro because the emulator cannot
// express a per-block `extern __shared__` array.
#ifndef CHRONOQL_DYNAMIC_SHARED
#define CHRONOQL_DYNAMIC_SHARED(type, name) extern __shared__ __align__(128) type name[]
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../core/half.h"
#include "../core/types.h"

namespace chronoql {
namespace cuda_kernels {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr unsigned kFullWarp = 0xffffffffu;

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
  const float* queries;            // prepared, queryCount x dimension
  const __half* halfQueries;       // tensor kernel: fp16 copies, zero-padded to a multiple of the tiles
  const float* margins;            // tensor kernel: per query, bound on |tensor score - exact score|
  uint32_t halfStride;             // elements per row of halfQueries
  const IndexTime* asOf;
  const uint32_t* excludeOffsets;  // null when no exclusions
  const RowId* excludeIds;         // sorted per query
  uint32_t queryCount;
  uint32_t k;
};

__host__ __device__ constexpr size_t alignShared(size_t bytes) { return (bytes + 127) / 128 * 128; }

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

// A row query `query` may return: live, valid at asOf, not excluded.
__device__ bool rowQualifies(const DeviceRows& data, const DeviceQueries& q, uint32_t query, uint32_t row, IndexTime asOf) {
  return data.deleted[row] == 0 && data.validFrom[row] <= asOf && asOf < data.validTo[row] &&
         !isExcludedDevice(q, query, data.ids[row]);
}

// Inserts into a list kept sorted best-first in shared memory. Called by one
// lane at a time, and each list is owned by a single warp, so no atomics are
// needed.
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

// Empties `lists` top-k lists of k entries (block-wide; the caller syncs).
__device__ void clearLists(float* scores, RowId* ids, uint32_t* counts, size_t lists, uint32_t k) {
  for (size_t i = threadIdx.x; i < lists * k; i += kThreads) {
    scores[i] = -INFINITY;
    ids[i] = kNoId;
  }
  for (size_t i = threadIdx.x; i < lists; i += kThreads) counts[i] = 0;
}

// Score a candidate must reach (ties decided by id inside insertSorted).
__device__ __forceinline__ float listThreshold(const float* scores, uint32_t count, uint32_t k) {
  return count < k ? -INFINITY : scores[k - 1];
}

// Warp-collective: inserts `total` (score, id) entries, already filtered,
// into the warp's list; lanes vote, and the candidates are inserted one lane
// at a time. Entries with kNoId are empty slots.
__device__ void warpInsertEntries(float* scores, RowId* ids, uint32_t* count, uint32_t k, const float* sourceScores,
                                  const RowId* sourceIds, uint32_t total) {
  const int lane = threadIdx.x & 31;
  for (uint32_t first = 0; first < total; first += 32) {
    const uint32_t i = first + lane;
    float score = -INFINITY;
    RowId id = kNoId;
    if (i < total) {
      score = sourceScores[i];
      id = sourceIds[i];
    }
    const bool candidate = id != kNoId && (*count < k || ranksBeforeDevice(score, id, scores[k - 1], ids[k - 1]));
    unsigned pending = __ballot_sync(kFullWarp, candidate);
    while (pending != 0) {
      const int source = __ffs(pending) - 1;
      pending &= pending - 1;
      if (lane == source) insertSorted(scores, ids, count, k, score, id);
      __syncwarp();
    }
  }
}

// Eight consecutive elements of a stored row as one 16-byte (fp16) or two
// 16-byte (fp32) loads. Usable when the dimension is a multiple of 8, which
// keeps every row start 16-byte aligned.
template <typename RowT>
struct RowGroup;

template <>
struct RowGroup<__half> {
  uint4 bits;
  __device__ __forceinline__ void load(const __half* source) { bits = *reinterpret_cast<const uint4*>(source); }
  __device__ __forceinline__ void clear() { bits = uint4{0, 0, 0, 0}; }
  __device__ __forceinline__ void toFloats(float* out) const {
    const __half2* pairs = reinterpret_cast<const __half2*>(&bits);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const float2 pair = __half22float2(pairs[j]);
      out[2 * j] = pair.x;
      out[2 * j + 1] = pair.y;
    }
  }
  __device__ __forceinline__ void storeHalves(__half* destination) const { *reinterpret_cast<uint4*>(destination) = bits; }
};

template <>
struct RowGroup<float> {
  float4 low, high;
  __device__ __forceinline__ void load(const float* source) {
    low = reinterpret_cast<const float4*>(source)[0];
    high = reinterpret_cast<const float4*>(source)[1];
  }
  __device__ __forceinline__ void clear() { low = high = float4{0.0f, 0.0f, 0.0f, 0.0f}; }
  __device__ __forceinline__ void toFloats(float* out) const {
    out[0] = low.x, out[1] = low.y, out[2] = low.z, out[3] = low.w;
    out[4] = high.x, out[5] = high.y, out[6] = high.z, out[7] = high.w;
  }
  // Rounds to nearest fp16: the conversion of fp32 rows for the tensor cores.
  __device__ __forceinline__ void storeHalves(__half* destination) const {
    __half2* pairs = reinterpret_cast<__half2*>(destination);
    pairs[0] = __floats2half2_rn(low.x, low.y);
    pairs[1] = __floats2half2_rn(low.z, low.w);
    pairs[2] = __floats2half2_rn(high.x, high.y);
    pairs[3] = __floats2half2_rn(high.z, high.w);
  }
};

__host__ __device__ constexpr bool groupsFit(uint32_t dimension) { return dimension % 8 == 0; }

// The exact score: fp32 FMAs over the dimensions in order, as scanTopKKernel
// computes it.
template <typename RowT>
__device__ float exactScore(const RowT* row, const float* query, uint32_t d) {
  float score = 0.0f;
  if (groupsFit(d)) {
    for (uint32_t i = 0; i < d; i += 8) {
      RowGroup<RowT> group;
      group.load(row + i);
      float x[8];
      group.toFloats(x);
      const float4 q0 = *reinterpret_cast<const float4*>(query + i);
      const float4 q1 = *reinterpret_cast<const float4*>(query + i + 4);
      score = fmaf(q0.x, x[0], score);
      score = fmaf(q0.y, x[1], score);
      score = fmaf(q0.z, x[2], score);
      score = fmaf(q0.w, x[3], score);
      score = fmaf(q1.x, x[4], score);
      score = fmaf(q1.y, x[5], score);
      score = fmaf(q1.z, x[6], score);
      score = fmaf(q1.w, x[7], score);
    }
  } else {
    for (uint32_t i = 0; i < d; ++i) score = fmaf(query[i], loadAsFloat(row, i), score);
  }
  return score;
}

// ---------------------------------------------------------------------------
// scanTopKKernel: CUDA-core FMAs.
//
// Block shape: 8 warps; lane l of a warp owns rows l, l+32, l+64, l+96 of a
// 128-row tile, warp w owns queries w*QPT .. w*QPT+QPT-1 of the block's query
// tile (QPT = queryTile / 8).
constexpr int kRowTile = 128;
constexpr int kRowsPerLane = kRowTile / 32;
// Dimension slice staged in shared memory per step.
constexpr int kDimChunk = 32;

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

  clearLists(listScores, listIds, listCounts, QueryTile, q.k);
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
        const bool candidate =
            row < rowEnd && score >= listThreshold(scores, *count, q.k) && rowQualifies(data, q, query, row, asOf);
        unsigned pending = __ballot_sync(kFullWarp, candidate);
        while (pending != 0) {
          const int source = __ffs(pending) - 1;
          pending &= pending - 1;
          if (lane == source) insertSorted(scores, ids, count, q.k, score, data.ids[row]);
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

// ---------------------------------------------------------------------------
// streamTopKKernel: one to four queries, bound by reading the rows.
//
// A warp takes four rows at a time, eight lanes per row; each lane reads
// 16-byte groups of its row (one load covers 8 fp16 or 4 fp32 values), so a
// warp's loads are four contiguous 128-byte segments. The eight partial sums
// meet through three shuffles. Rows the time filter or the deleted flag rules
// out for every query are not read. Each warp keeps its own lists; at the end
// the block merges them, and writes one list per query at
// [(query * gridDim.x + blockIdx.x) * k].
constexpr uint32_t kStreamMaxQueries = 4;
constexpr int kLanesPerStreamRow = 8;
constexpr uint32_t kStreamRowsPerStep = 32 / kLanesPerStreamRow;

struct StreamSharedLayout {
  __host__ __device__ static size_t listEntries(uint32_t queryCount, uint32_t k) { return static_cast<size_t>(kWarps) * queryCount * k; }
  __host__ __device__ static size_t queriesOffset(uint32_t queryCount, uint32_t k) {
    return alignShared((2 * listEntries(queryCount, k) + static_cast<size_t>(kWarps) * queryCount) * 4);
  }
  static size_t bytes(uint32_t queryCount, uint32_t k, uint32_t dimension) {
    return queriesOffset(queryCount, k) + static_cast<size_t>(queryCount) * dimension * sizeof(float);
  }
};

template <typename RowT>
__global__ void __launch_bounds__(kThreads) streamTopKKernel(DeviceRows data, DeviceQueries q, uint32_t rowsPerBlock,
                                                             float* partialScores, RowId* partialIds) {
  CHRONOQL_DYNAMIC_SHARED(float, shared);
  const uint32_t queryCount = q.queryCount;
  const uint32_t k = q.k;
  const uint32_t d = data.dimension;
  const size_t entries = StreamSharedLayout::listEntries(queryCount, k);
  float* listScores = shared;                                              // [kWarps][queryCount][k]
  RowId* listIds = reinterpret_cast<RowId*>(listScores + entries);         // [kWarps][queryCount][k]
  uint32_t* listCounts = listIds + entries;                                // [kWarps][queryCount]
  float* queries = reinterpret_cast<float*>(reinterpret_cast<unsigned char*>(shared) +
                                            StreamSharedLayout::queriesOffset(queryCount, k));  // [queryCount][d]

  const int thread = threadIdx.x;
  const int lane = thread & 31;
  const int warp = thread >> 5;
  const int sublane = lane % kLanesPerStreamRow;
  const uint32_t rowBegin = blockIdx.x * rowsPerBlock;
  const uint32_t rowEnd = min(data.rowCount, rowBegin + rowsPerBlock);
  const RowT* rows = static_cast<const RowT*>(data.rows);

  clearLists(listScores, listIds, listCounts, static_cast<size_t>(kWarps) * queryCount, k);
  for (size_t i = thread; i < static_cast<size_t>(queryCount) * d; i += kThreads) queries[i] = q.queries[i];
  IndexTime asOf[kStreamMaxQueries];
#pragma unroll
  for (uint32_t t = 0; t < kStreamMaxQueries; ++t) asOf[t] = t < queryCount ? q.asOf[t] : 0;
  __syncthreads();

  for (uint32_t base = rowBegin + warp * kStreamRowsPerStep; base < rowEnd; base += kStreamRowsPerStep * kWarps) {
    const uint32_t row = base + lane / kLanesPerStreamRow;
    bool needed = false;
    if (row < rowEnd && data.deleted[row] == 0) {
      const IndexTime from = data.validFrom[row];
      const IndexTime to = data.validTo[row];
#pragma unroll
      for (uint32_t t = 0; t < kStreamMaxQueries; ++t) needed = needed || (t < queryCount && from <= asOf[t] && asOf[t] < to);
    }
    float partial[kStreamMaxQueries] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (needed) {
      const RowT* source = rows + static_cast<size_t>(row) * d;
      if (groupsFit(d)) {
        for (uint32_t i = sublane * 8; i < d; i += 8 * kLanesPerStreamRow) {
          RowGroup<RowT> group;
          group.load(source + i);
          float x[8];
          group.toFloats(x);
#pragma unroll
          for (uint32_t t = 0; t < kStreamMaxQueries; ++t) {
            if (t < queryCount) {
              const float* query = queries + static_cast<size_t>(t) * d + i;
#pragma unroll
              for (int j = 0; j < 8; ++j) partial[t] = fmaf(query[j], x[j], partial[t]);
            }
          }
        }
      } else {
        for (uint32_t i = sublane; i < d; i += kLanesPerStreamRow) {
          const float x = loadAsFloat(source, i);
#pragma unroll
          for (uint32_t t = 0; t < kStreamMaxQueries; ++t) {
            if (t < queryCount) partial[t] = fmaf(queries[static_cast<size_t>(t) * d + i], x, partial[t]);
          }
        }
      }
    }
#pragma unroll
    for (uint32_t t = 0; t < kStreamMaxQueries; ++t) {
      if (t >= queryCount) break;  // uniform across the block
      for (int offset = kLanesPerStreamRow / 2; offset > 0; offset /= 2) {
        partial[t] += __shfl_xor_sync(kFullWarp, partial[t], offset);
      }
      float* scores = listScores + (static_cast<size_t>(warp) * queryCount + t) * k;
      RowId* ids = listIds + (static_cast<size_t>(warp) * queryCount + t) * k;
      uint32_t* count = listCounts + warp * queryCount + t;
      const bool candidate = sublane == 0 && needed && partial[t] >= listThreshold(scores, *count, k) &&
                             rowQualifies(data, q, t, row, asOf[t]);
      unsigned pending = __ballot_sync(kFullWarp, candidate);
      while (pending != 0) {
        const int source = __ffs(pending) - 1;
        pending &= pending - 1;
        if (lane == source) insertSorted(scores, ids, count, k, partial[t], data.ids[row]);
        __syncwarp();
      }
    }
  }
  __syncthreads();

  // Warp t gathers the other warps' lists for query t into its own and writes it.
  if (static_cast<uint32_t>(warp) < queryCount) {
    const uint32_t t = warp;
    float* scores = listScores + (static_cast<size_t>(warp) * queryCount + t) * k;
    RowId* ids = listIds + (static_cast<size_t>(warp) * queryCount + t) * k;
    uint32_t* count = listCounts + warp * queryCount + t;
    for (int other = 0; other < kWarps; ++other) {
      if (other == warp) continue;
      const size_t list = static_cast<size_t>(other) * queryCount + t;
      warpInsertEntries(scores, ids, count, k, listScores + list * k, listIds + list * k, listCounts[list]);
    }
    const size_t out = (static_cast<size_t>(t) * gridDim.x + blockIdx.x) * k;
    for (uint32_t j = lane; j < k; j += 32) {
      partialScores[out + j] = scores[j];
      partialIds[out + j] = ids[j];
    }
  }
}

// ---------------------------------------------------------------------------
// tensorScanTopKKernel: tensor-core scores, selection in shared memory.
//
// A block scores QueryTile queries against 128-row tiles. Per tile, 64
// dimensions at a time are staged in shared memory as fp16 (double-buffered:
// the next slice is loaded into registers while the tensor cores work on this
// one); 8 warps each own a (queries x rows) block of 16x16 accumulator
// fragments. The finished tile of scores goes to shared memory, where the
// warps that own the queries pick the candidates.
constexpr int kTensorRowTile = 128;
constexpr int kTensorDimChunk = 64;
constexpr int kStageStride = kTensorDimChunk + 8;  // halves; 16 bytes of padding spread the rows over the banks
constexpr int kScoreStride = kTensorRowTile + 4;   // floats
constexpr uint32_t kCandidatesPerWarp = 64;
constexpr int kGroupsPerStagedRow = kTensorDimChunk / 8;

template <int QueryTile>
struct TensorTile {
  static_assert(QueryTile == 16 || QueryTile == 64 || QueryTile == 128, "query tiles of 16, 64 or 128");
  static constexpr int kWarpsAlongQueries = QueryTile >= 32 ? 2 : 1;
  static constexpr int kWarpsAlongRows = kWarps / kWarpsAlongQueries;
  static constexpr int kWarpQueries = QueryTile / kWarpsAlongQueries;
  static constexpr int kWarpRows = kTensorRowTile / kWarpsAlongRows;
  static constexpr int kFragmentsAlongQueries = kWarpQueries / 16;
  static constexpr int kFragmentsAlongRows = kWarpRows / 16;
  // Selection: warp w owns the query slots w, w + 8, w + 16, ...; one bit per
  // (owned slot, row of the lane) marks a candidate.
  static constexpr int kQueriesPerWarp = QueryTile / kWarps;
  static_assert(kQueriesPerWarp * (kTensorRowTile / 32) <= 64, "candidate bits fit a 64-bit mask");

  static constexpr int kQueryGroups = QueryTile * kGroupsPerStagedRow;
  static constexpr int kRowGroups = kTensorRowTile * kGroupsPerStagedRow;
  static constexpr int kQueryGroupsPerThread = (kQueryGroups + kThreads - 1) / kThreads;
  static constexpr int kRowGroupsPerThread = kRowGroups / kThreads;

  static constexpr size_t kStageHalves = static_cast<size_t>(QueryTile + kTensorRowTile) * kStageStride;
  static constexpr size_t kStageBytes = alignShared(kStageHalves * 2);
  static constexpr size_t kScoresOffset = 2 * kStageBytes;
  static constexpr size_t kCandidatesOffset = kScoresOffset + alignShared(static_cast<size_t>(QueryTile) * kScoreStride * 4);
  static constexpr size_t kListsOffset = kCandidatesOffset + alignShared((2 * kCandidatesPerWarp + 1) * kWarps * 4);
  static size_t bytes(uint32_t k) { return kListsOffset + static_cast<size_t>(QueryTile) * k * 8 + QueryTile * 4; }
};

// One thread's share of a staged slice, held in registers between the global
// loads and the shared-memory stores.
template <typename RowT, int QueryTile>
struct TensorStaging {
  using Tile = TensorTile<QueryTile>;
  uint4 queries[Tile::kQueryGroupsPerThread];
  RowGroup<RowT> rows[Tile::kRowGroupsPerThread];

  __device__ void fetch(const DeviceRows& data, const DeviceQueries& q, uint32_t firstQuery, uint32_t tileBegin,
                        uint32_t rowEnd, uint32_t dimBegin, int thread) {
#pragma unroll
    for (int i = 0; i < Tile::kQueryGroupsPerThread; ++i) {
      const int group = thread + i * kThreads;
      if (group < Tile::kQueryGroups) {
        const size_t at = static_cast<size_t>(firstQuery + group / kGroupsPerStagedRow) * q.halfStride + dimBegin +
                          (group % kGroupsPerStagedRow) * 8;
        queries[i] = *reinterpret_cast<const uint4*>(q.halfQueries + at);
      }
    }
    if (!groupsFit(data.dimension)) return;  // commit() loads element by element
    const RowT* source = static_cast<const RowT*>(data.rows);
#pragma unroll
    for (int i = 0; i < Tile::kRowGroupsPerThread; ++i) {
      const int group = thread + i * kThreads;
      const uint32_t row = tileBegin + group / kGroupsPerStagedRow;
      const uint32_t dim = dimBegin + (group % kGroupsPerStagedRow) * 8;
      if (row < rowEnd && dim < data.dimension) rows[i].load(source + static_cast<size_t>(row) * data.dimension + dim);
      else rows[i].clear();
    }
  }

  __device__ void commit(__half* stage, const DeviceRows& data, uint32_t tileBegin, uint32_t rowEnd, uint32_t dimBegin,
                         int thread) const {
    __half* rowStage = stage + QueryTile * kStageStride;
#pragma unroll
    for (int i = 0; i < Tile::kQueryGroupsPerThread; ++i) {
      const int group = thread + i * kThreads;
      if (group < Tile::kQueryGroups) {
        *reinterpret_cast<uint4*>(stage + (group / kGroupsPerStagedRow) * kStageStride + (group % kGroupsPerStagedRow) * 8) =
            queries[i];
      }
    }
    const RowT* source = static_cast<const RowT*>(data.rows);
#pragma unroll
    for (int i = 0; i < Tile::kRowGroupsPerThread; ++i) {
      const int group = thread + i * kThreads;
      const int rowInTile = group / kGroupsPerStagedRow;
      const int part = group % kGroupsPerStagedRow;
      __half* destination = rowStage + rowInTile * kStageStride + part * 8;
      if (groupsFit(data.dimension)) {
        rows[i].storeHalves(destination);
      } else {
        const uint32_t row = tileBegin + rowInTile;
        for (int j = 0; j < 8; ++j) {
          const uint32_t dim = dimBegin + part * 8 + j;
          const float value = row < rowEnd && dim < data.dimension
                                  ? loadAsFloat(source, static_cast<size_t>(row) * data.dimension + dim)
                                  : 0.0f;
          destination[j] = __float2half_rn(value);
        }
      }
    }
  }
};

// grid.x: query tiles, grid.y: row blocks. The blocks that share a range of
// rows have neighbouring indices, so they run side by side and the rows come
// from L2 after the first read. Writes each block's top-k per query at
// [(query * gridDim.y + blockIdx.y) * k].
template <typename RowT, int QueryTile>
__global__ void __launch_bounds__(kThreads) tensorScanTopKKernel(DeviceRows data, DeviceQueries q, uint32_t rowsPerBlock,
                                                                 float* partialScores, RowId* partialIds) {
  namespace wmma = nvcuda::wmma;
  using Tile = TensorTile<QueryTile>;
  CHRONOQL_DYNAMIC_SHARED(float, shared);
  unsigned char* base = reinterpret_cast<unsigned char*>(shared);
  const auto stage = [base](uint32_t chunk) { return reinterpret_cast<__half*>(base + (chunk & 1) * Tile::kStageBytes); };
  float* scoreTile = reinterpret_cast<float*>(base + Tile::kScoresOffset);  // [QueryTile][kScoreStride]
  uint32_t* candidateKeys = reinterpret_cast<uint32_t*>(base + Tile::kCandidatesOffset);  // [kWarps][kCandidatesPerWarp]
  float* candidateScores = reinterpret_cast<float*>(candidateKeys + kWarps * kCandidatesPerWarp);
  uint32_t* candidateCounts = candidateKeys + 2 * kWarps * kCandidatesPerWarp;  // [kWarps]
  float* listScores = reinterpret_cast<float*>(base + Tile::kListsOffset);  // [QueryTile][k]
  RowId* listIds = reinterpret_cast<RowId*>(listScores + QueryTile * q.k);  // [QueryTile][k]
  uint32_t* listCounts = listIds + QueryTile * q.k;                         // [QueryTile]

  const int thread = threadIdx.x;
  const int lane = thread & 31;
  const int warp = thread >> 5;
  const uint32_t firstQuery = blockIdx.x * QueryTile;
  const uint32_t rowBegin = blockIdx.y * rowsPerBlock;
  const uint32_t rowEnd = min(data.rowCount, rowBegin + rowsPerBlock);
  const uint32_t d = data.dimension;
  const uint32_t k = q.k;
  const RowT* rows = static_cast<const RowT*>(data.rows);
  const int queryOrigin = (warp / Tile::kWarpsAlongRows) * Tile::kWarpQueries;
  const int rowOrigin = (warp % Tile::kWarpsAlongRows) * Tile::kWarpRows;

  clearLists(listScores, listIds, listCounts, QueryTile, k);

  TensorStaging<RowT, QueryTile> staging;
  for (uint32_t tileBegin = rowBegin; tileBegin < rowEnd; tileBegin += kTensorRowTile) {
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> accumulators[Tile::kFragmentsAlongQueries][Tile::kFragmentsAlongRows];
#pragma unroll
    for (int i = 0; i < Tile::kFragmentsAlongQueries; ++i)
#pragma unroll
      for (int j = 0; j < Tile::kFragmentsAlongRows; ++j) wmma::fill_fragment(accumulators[i][j], 0.0f);

    staging.fetch(data, q, firstQuery, tileBegin, rowEnd, 0, thread);
    staging.commit(stage(0), data, tileBegin, rowEnd, 0, thread);
    __syncthreads();
    for (uint32_t dimBegin = 0, chunk = 0; dimBegin < d; dimBegin += kTensorDimChunk, ++chunk) {
      const bool more = dimBegin + kTensorDimChunk < d;
      if (more) staging.fetch(data, q, firstQuery, tileBegin, rowEnd, dimBegin + kTensorDimChunk, thread);
      const __half* queryStage = stage(chunk);
      const __half* rowStage = queryStage + QueryTile * kStageStride;
#pragma unroll
      for (int step = 0; step < kTensorDimChunk; step += 16) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[Tile::kFragmentsAlongQueries];
        wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b[Tile::kFragmentsAlongRows];
#pragma unroll
        for (int i = 0; i < Tile::kFragmentsAlongQueries; ++i) {
          wmma::load_matrix_sync(a[i], queryStage + (queryOrigin + 16 * i) * kStageStride + step, kStageStride);
        }
#pragma unroll
        for (int j = 0; j < Tile::kFragmentsAlongRows; ++j) {
          wmma::load_matrix_sync(b[j], rowStage + (rowOrigin + 16 * j) * kStageStride + step, kStageStride);
        }
#pragma unroll
        for (int i = 0; i < Tile::kFragmentsAlongQueries; ++i)
#pragma unroll
          for (int j = 0; j < Tile::kFragmentsAlongRows; ++j) wmma::mma_sync(accumulators[i][j], a[i], b[j], accumulators[i][j]);
      }
      if (more) staging.commit(stage(chunk + 1), data, tileBegin, rowEnd, dimBegin + kTensorDimChunk, thread);
      __syncthreads();
    }

    // Which (query, row) a fragment element holds is hardware-defined: the
    // scores go to shared memory whole, and only then are they read one by one.
#pragma unroll
    for (int i = 0; i < Tile::kFragmentsAlongQueries; ++i)
#pragma unroll
      for (int j = 0; j < Tile::kFragmentsAlongRows; ++j) {
        wmma::store_matrix_sync(scoreTile + (queryOrigin + 16 * i) * kScoreStride + rowOrigin + 16 * j, accumulators[i][j],
                                kScoreStride, wmma::mem_row_major);
      }
    __syncthreads();

    // Candidates: rows whose tensor score comes within the query's margin of
    // its k-th exact score and that pass the time filter, the deleted flag and
    // the exclusions. Bit (t * 4 + r): owned slot t, row lane + 32 r.
    uint64_t pending = 0;
#pragma unroll
    for (int t = 0; t < Tile::kQueriesPerWarp; ++t) {
      const int slot = warp + kWarps * t;
      const uint32_t query = firstQuery + slot;
      if (query >= q.queryCount) break;  // warp-uniform; later slots are further out
      const float threshold = listThreshold(listScores + slot * k, listCounts[slot], k) - q.margins[query];
      const IndexTime asOf = q.asOf[query];
#pragma unroll
      for (int r = 0; r < kTensorRowTile / 32; ++r) {
        const int rowInTile = lane + 32 * r;
        const uint32_t row = tileBegin + rowInTile;
        if (row < rowEnd && scoreTile[slot * kScoreStride + rowInTile] >= threshold && rowQualifies(data, q, query, row, asOf)) {
          pending |= 1ull << (t * (kTensorRowTile / 32) + r);
        }
      }
    }
    // In rounds of at most kCandidatesPerWarp: the lanes score the candidates
    // exactly side by side, then lane 0 inserts them.
    uint32_t* keys = candidateKeys + warp * kCandidatesPerWarp;
    float* exact = candidateScores + warp * kCandidatesPerWarp;
    uint32_t* taken = candidateCounts + warp;
    while (__any_sync(kFullWarp, pending != 0)) {
      if (lane == 0) *taken = 0;
      __syncwarp();
      while (pending != 0) {
        const int bit = __ffsll(pending) - 1;
        const uint32_t index = atomicAdd(taken, 1u);
        if (index >= kCandidatesPerWarp) break;
        keys[index] = static_cast<uint32_t>(bit / (kTensorRowTile / 32)) << 16 | (lane + 32 * (bit % (kTensorRowTile / 32)));
        pending &= pending - 1;
      }
      __syncwarp();
      const uint32_t count = min(*taken, kCandidatesPerWarp);
      for (uint32_t i = lane; i < count; i += 32) {
        const uint32_t query = firstQuery + warp + kWarps * (keys[i] >> 16);
        const uint32_t row = tileBegin + (keys[i] & 0xffffu);
        exact[i] = exactScore(rows + static_cast<size_t>(row) * d, q.queries + static_cast<size_t>(query) * d, d);
      }
      __syncwarp();
      if (lane == 0) {
        for (uint32_t i = 0; i < count; ++i) {
          const int slot = warp + kWarps * static_cast<int>(keys[i] >> 16);
          const uint32_t row = tileBegin + (keys[i] & 0xffffu);
          insertSorted(listScores + slot * k, listIds + slot * k, listCounts + slot, k, exact[i], data.ids[row]);
        }
      }
      __syncwarp();
    }
  }

  for (int t = 0; t < Tile::kQueriesPerWarp; ++t) {
    const int slot = warp + kWarps * t;
    const uint32_t query = firstQuery + slot;
    if (query >= q.queryCount) break;
    const size_t out = (static_cast<size_t>(query) * gridDim.y + blockIdx.y) * k;
    for (uint32_t j = lane; j < k; j += 32) {
      partialScores[out + j] = listScores[slot * k + j];
      partialIds[out + j] = listIds[slot * k + j];
    }
  }
}

// ---------------------------------------------------------------------------
// rowRangeKernel: the largest squared norm and the largest magnitude of the
// rows [firstRow, firstRow + count), folded into the two maxima (as float
// bits: non-negative floats order like their bit patterns). They bound the
// error of the tensor scores and say whether the rows fit fp16.
template <typename RowT>
__global__ void __launch_bounds__(kThreads) rowRangeKernel(const RowT* rows, uint32_t firstRow, uint32_t count, uint32_t d,
                                                           unsigned* maxima) {
  const uint32_t offset = blockIdx.x * kThreads + threadIdx.x;
  float normSquared = 0.0f;
  float largest = 0.0f;
  if (offset < count) {
    const RowT* row = rows + static_cast<size_t>(firstRow + offset) * d;
    for (uint32_t i = 0; i < d; ++i) {
      const float value = loadAsFloat(row, i);
      normSquared = fmaf(value, value, normSquared);
      largest = fmaxf(largest, fabsf(value));
    }
  }
  const unsigned warpNorm = __reduce_max_sync(kFullWarp, __float_as_uint(normSquared));
  const unsigned warpLargest = __reduce_max_sync(kFullWarp, __float_as_uint(largest));
  if ((threadIdx.x & 31) == 0) {
    atomicMax(maxima, warpNorm);
    atomicMax(maxima + 1, warpLargest);
  }
}

// ---------------------------------------------------------------------------
// mergeTopKKernel: merges the per-block lists (already filtered) into the
// final top-k with the same insertion rule. warpsPerQuery warps share a query
// (1, 2, 4 or 8): each merges every warpsPerQuery-th list, then the first of
// them merges their lists. Small batches spread a query over the whole block,
// so its many lists are read in parallel.
__global__ void __launch_bounds__(kThreads) mergeTopKKernel(const float* partialScores, const RowId* partialIds,
                                                            uint32_t listsPerQuery, uint32_t queryCount, uint32_t k,
                                                            uint32_t warpsPerQuery, RowId* outIds, float* outScores,
                                                            uint32_t* outCounts) {
  CHRONOQL_DYNAMIC_SHARED(float, shared);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  float* scores = shared + warp * k;
  RowId* ids = reinterpret_cast<RowId*>(shared + kWarps * k) + warp * k;
  uint32_t* counts = reinterpret_cast<uint32_t*>(shared + 2 * kWarps * k);
  const uint32_t member = warp % warpsPerQuery;
  const uint32_t query = blockIdx.x * (kWarps / warpsPerQuery) + warp / warpsPerQuery;
  if (lane == 0) counts[warp] = 0;
  __syncwarp();
  if (query < queryCount) {
    for (uint32_t list = member; list < listsPerQuery; list += warpsPerQuery) {
      const size_t at = (static_cast<size_t>(query) * listsPerQuery + list) * k;
      warpInsertEntries(scores, ids, &counts[warp], k, partialScores + at, partialIds + at, k);
    }
  }
  __syncthreads();
  if (query >= queryCount || member != 0) return;  // whole warps leave together
  for (uint32_t other = 1; other < warpsPerQuery; ++other) {
    const uint32_t source = warp + other;
    warpInsertEntries(scores, ids, &counts[warp], k, shared + source * k,
                      reinterpret_cast<const RowId*>(shared + kWarps * k) + source * k, counts[source]);
  }
  const uint32_t count = counts[warp];
  for (uint32_t j = lane; j < k; j += 32) {
    outIds[static_cast<size_t>(query) * k + j] = j < count ? ids[j] : kNoId;
    outScores[static_cast<size_t>(query) * k + j] = j < count ? scores[j] : -INFINITY;
  }
  if (lane == 0) outCounts[query] = count;
}

// ---------------------------------------------------------------------------
// Host side, shared by the real backend and the emulator.

// fp16's largest finite value: rows or queries with a magnitude this large or
// larger are scored on the CUDA cores.
constexpr float kHalfMax = 65504.0f;

// What rowRangeKernel found over the rows on the device.
struct RowRange {
  float normSquared = 0.0f;
  float largestMagnitude = 0.0f;
};

// The queries of a search as the tensor kernel reads them.
struct TensorQueryBatch {
  std::vector<uint16_t> halves;  // paddedQueries x paddedDimension fp16 bits, zero-padded
  std::vector<float> margins;    // one per query
  uint32_t paddedQueries = 0;
  uint32_t paddedDimension = 0;
  bool representable = true;     // false when a query holds a value fp16 cannot
};

// Bound on |tensor score - exact score| for one query, with x the stored row
// (x' its fp16 conversion: x itself for fp16 rows), q the query and q' its
// fp16 copy:
//   |fl(x'.q') - fl(x.q)| <= |fl(x'.q') - x'.q'| + |x'.q' - x.q| + |x.q - fl(x.q)|
//   <= g |x'||q'| + |x'||q - q'| + |x - x'||q| + e |x||q|,
// where g covers the tensor cores' fp32 accumulation (which may truncate:
// d * 2^-22), e the exact sequential fp32 sum (d * 2^-23), |x - x'| <=
// 2^-11 |x| + sqrt(d) 2^-25 (round to nearest, subnormals included), and |x|
// is bounded by the largest stored row norm. Doubled for the roundings of the
// comparison itself.
inline float tensorScoreMargin(const float* query, const uint16_t* halfQuery, uint32_t d, bool halfRows, const RowRange& range) {
  double norm = 0.0, halfNorm = 0.0, rounding = 0.0;
  for (uint32_t i = 0; i < d; ++i) {
    const double value = query[i];
    const double half = halfBitsToFloat(halfQuery[i]);
    norm += value * value;
    halfNorm += half * half;
    rounding += (value - half) * (value - half);
  }
  norm = std::sqrt(norm);
  halfNorm = std::sqrt(halfNorm);
  rounding = std::sqrt(rounding);
  const double dimension = d;
  // The squared norm was summed in fp32 (relative error <= d * 2^-24).
  const double rowNorm = std::sqrt(static_cast<double>(range.normSquared) * (1.0 + dimension * std::ldexp(1.0, -22)));
  const double rowRounding = halfRows ? 0.0 : std::ldexp(1.0, -11) * rowNorm + std::sqrt(dimension) * std::ldexp(1.0, -25);
  const double halfRowNorm = rowNorm + rowRounding;
  const double accumulation = dimension * std::ldexp(1.0, -22);
  const double exactSum = dimension * std::ldexp(1.0, -23);
  const double bound = accumulation * halfRowNorm * halfNorm + halfRowNorm * rounding + rowRounding * norm + exactSum * rowNorm * norm;
  return static_cast<float>(2.0 * bound) + 1e-30f;
}

inline TensorQueryBatch prepareTensorQueries(const float* queries, uint32_t queryCount, uint32_t d, bool halfRows,
                                             const RowRange& range) {
  TensorQueryBatch batch;
  // Whole tiles in both directions, so the kernel stages queries without bounds checks.
  batch.paddedQueries = (queryCount + 127) / 128 * 128;
  batch.paddedDimension = (d + kTensorDimChunk - 1) / kTensorDimChunk * kTensorDimChunk;
  batch.halves.assign(static_cast<size_t>(batch.paddedQueries) * batch.paddedDimension, 0);
  batch.margins.resize(queryCount);
  for (uint32_t query = 0; query < queryCount; ++query) {
    const float* source = queries + static_cast<size_t>(query) * d;
    uint16_t* destination = batch.halves.data() + static_cast<size_t>(query) * batch.paddedDimension;
    for (uint32_t i = 0; i < d; ++i) {
      if (!(std::fabs(source[i]) < kHalfMax)) batch.representable = false;
      destination[i] = floatToHalfBits(source[i]);
    }
    batch.margins[query] = tensorScoreMargin(source, destination, d, halfRows, range);
  }
  return batch;
}

inline bool rowsFitHalf(const RowRange& range) { return range.largestMagnitude < kHalfMax; }

enum class ScanKernel : uint8_t { Stream, Tensor, Scalar };

struct DeviceLimits {
  int multiprocessors = 1;
  size_t sharedPerBlock = 48 * 1024;           // opt-in maximum
  size_t sharedPerMultiprocessor = 48 * 1024;
};

// Launch geometry of one search.
struct SearchPlan {
  ScanKernel kernel = ScanKernel::Scalar;
  int queryTile = 0;
  uint32_t gridX = 0;
  uint32_t gridY = 0;
  uint32_t rowsPerBlock = 0;
  uint32_t listsPerQuery = 0;  // partial lists per query: [(query * listsPerQuery + list) * k]
  size_t scanSharedBytes = 0;
  uint32_t mergeWarpsPerQuery = 1;
  uint32_t mergeBlocks = 0;
  size_t mergeSharedBytes = 0;
};

inline uint32_t ceilDivide(uint32_t a, uint32_t b) { return (a + b - 1) / b; }

inline size_t tensorSharedBytes(int queryTile, uint32_t k) {
  switch (queryTile) {
    case 16: return TensorTile<16>::bytes(k);
    case 64: return TensorTile<64>::bytes(k);
    default: return TensorTile<128>::bytes(k);
  }
}

// Blocks of `bytes` shared memory that one multiprocessor holds at once (at
// most 8 of 256 threads).
inline uint32_t residentBlocks(const DeviceLimits& device, size_t bytes) {
  const size_t bySharedMemory = bytes == 0 ? 8 : device.sharedPerMultiprocessor / bytes;
  return static_cast<uint32_t>(std::max<size_t>(1, std::min<size_t>(8, bySharedMemory)));
}

// Picks the scan kernel and its geometry: the stream kernel for up to four
// queries, the tensor kernel when the values fit fp16 (the largest query tile
// the batch needs whose lists fit in shared memory), the CUDA-core kernel
// otherwise. Each fills the device once: as many blocks as the
// multiprocessors hold, each scanning a contiguous range of rows. Returns
// false when not even the smallest tiles fit in shared memory.
inline bool planSearch(uint32_t rowCount, uint32_t dimension, uint32_t queryCount, uint32_t k, bool tensorEligible,
                       const DeviceLimits& device, SearchPlan& plan) {
  plan = SearchPlan{};
  const uint32_t multiprocessors = static_cast<uint32_t>(std::max(1, device.multiprocessors));
  const uint32_t rows = std::max<uint32_t>(1, rowCount);
  const size_t streamBytes = StreamSharedLayout::bytes(queryCount, k, dimension);
  if (queryCount <= kStreamMaxQueries && streamBytes <= device.sharedPerBlock) {
    plan.kernel = ScanKernel::Stream;
    plan.scanSharedBytes = streamBytes;
    const uint32_t stepRows = kStreamRowsPerStep * kWarps;
    const uint32_t blocks = std::min(multiprocessors * residentBlocks(device, streamBytes), ceilDivide(rows, stepRows));
    plan.rowsPerBlock = ceilDivide(ceilDivide(rows, blocks), stepRows) * stepRows;
    plan.gridX = ceilDivide(rows, plan.rowsPerBlock);
    plan.gridY = 1;
    plan.listsPerQuery = plan.gridX;
  } else {
    int tile = 0;
    if (tensorEligible) {
      for (int candidate : {128, 64, 16}) {
        const bool needed = candidate == 16 || queryCount > static_cast<uint32_t>(candidate == 128 ? 64 : 16);
        if (needed && tensorSharedBytes(candidate, k) <= device.sharedPerBlock) {
          tile = candidate;
          break;
        }
      }
    }
    if (tile != 0) {
      plan.kernel = ScanKernel::Tensor;
      plan.queryTile = tile;
      plan.scanSharedBytes = tensorSharedBytes(tile, k);
      const uint32_t queryTiles = ceilDivide(queryCount, tile);
      const uint32_t rowTiles = ceilDivide(rows, kTensorRowTile);
      const uint32_t rowBlocks =
          std::min(rowTiles, std::max<uint32_t>(1, multiprocessors * residentBlocks(device, plan.scanSharedBytes) / queryTiles));
      plan.rowsPerBlock = ceilDivide(rowTiles, rowBlocks) * kTensorRowTile;
      plan.gridX = queryTiles;
      plan.gridY = ceilDivide(rows, plan.rowsPerBlock);
      plan.listsPerQuery = plan.gridY;
    } else {
      plan.kernel = ScanKernel::Scalar;
      plan.queryTile = queryCount >= 32 && ScanSharedLayout<32>::bytes(k) <= device.sharedPerBlock ? 32 : 8;
      plan.scanSharedBytes = plan.queryTile == 32 ? ScanSharedLayout<32>::bytes(k) : ScanSharedLayout<8>::bytes(k);
      if (plan.scanSharedBytes > device.sharedPerBlock) return false;
      const uint32_t queryTiles = ceilDivide(queryCount, plan.queryTile);
      const uint32_t rowTiles = ceilDivide(rows, kRowTile);
      const uint32_t rowBlocks = std::min(rowTiles, std::max<uint32_t>(1, ceilDivide(multiprocessors * 4, queryTiles)));
      plan.rowsPerBlock = ceilDivide(rowTiles, rowBlocks) * kRowTile;
      plan.gridX = ceilDivide(rows, plan.rowsPerBlock);
      plan.gridY = queryTiles;
      plan.listsPerQuery = plan.gridX;
    }
  }
  plan.mergeWarpsPerQuery = queryCount < static_cast<uint32_t>(kWarps) ? kWarps : 1;
  plan.mergeBlocks = ceilDivide(queryCount, kWarps / plan.mergeWarpsPerQuery);
  plan.mergeSharedBytes = static_cast<size_t>(kWarps) * k * (sizeof(float) + sizeof(RowId)) + kWarps * sizeof(uint32_t);
  return true;
}

// Launches the scan the plan chose and the merge. `launch(kernel, gridX,
// gridY, sharedBytes, arguments...)` runs one kernel: on the device in the
// backend, on threads in the emulator.
template <typename Launch>
void launchSearch(Launch&& launch, const SearchPlan& plan, bool halfRows, const DeviceRows& rows, const DeviceQueries& queries,
                  float* partialScores, RowId* partialIds, RowId* outIds, float* outScores, uint32_t* outCounts) {
  const auto scan = [&](auto kernel) {
    launch(kernel, plan.gridX, plan.gridY, plan.scanSharedBytes, rows, queries, plan.rowsPerBlock, partialScores, partialIds);
  };
  switch (plan.kernel) {
    case ScanKernel::Stream:
      if (halfRows) scan(streamTopKKernel<__half>);
      else scan(streamTopKKernel<float>);
      break;
    case ScanKernel::Tensor:
      if (plan.queryTile == 16) {
        if (halfRows) scan(tensorScanTopKKernel<__half, 16>);
        else scan(tensorScanTopKKernel<float, 16>);
      } else if (plan.queryTile == 64) {
        if (halfRows) scan(tensorScanTopKKernel<__half, 64>);
        else scan(tensorScanTopKKernel<float, 64>);
      } else {
        if (halfRows) scan(tensorScanTopKKernel<__half, 128>);
        else scan(tensorScanTopKKernel<float, 128>);
      }
      break;
    case ScanKernel::Scalar:
      if (plan.queryTile == 32) {
        if (halfRows) scan(scanTopKKernel<__half, 32>);
        else scan(scanTopKKernel<float, 32>);
      } else {
        if (halfRows) scan(scanTopKKernel<__half, 8>);
        else scan(scanTopKKernel<float, 8>);
      }
      break;
  }
  launch(mergeTopKKernel, plan.mergeBlocks, 1u, plan.mergeSharedBytes, static_cast<const float*>(partialScores),
         static_cast<const RowId*>(partialIds), plan.listsPerQuery, queries.queryCount, queries.k, plan.mergeWarpsPerQuery,
         outIds, outScores, outCounts);
}

}  // namespace cuda_kernels
}  // namespace chronoql
