#include "cpu_search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "half.h"
#include "simd.h"
#include "thread_pool.h"
#include "topk.h"

namespace chronoql {

void SearchResults::reset(uint32_t queries, uint32_t perQuery) {
  queryCount = queries;
  k = perQuery;
  ids.assign(static_cast<size_t>(queries) * perQuery, kNoId);
  scores.assign(static_cast<size_t>(queries) * perQuery, -std::numeric_limits<float>::infinity());
  counts.assign(queries, 0);
}

namespace {

// Rows scored together: a 96-row fp32 tile of d=384 is 147 KiB and stays in
// the 512 KiB L2 while every query block passes over it.
constexpr uint32_t kTileRows = 96;
// Rows a thread claims at once: large enough to amortise the claim, small
// enough to balance two or more threads over a 100k-row index.
constexpr uint32_t kWorkItemRows = 8192;
// Below this many multiply-adds a search runs on the calling thread only;
// waking helpers would cost more than it saves.
constexpr uint64_t kParallelThreshold = 1u << 21;
// Query blocks (of 16) scored per pass over a tile: 8 blocks of d=384 are
// 192 KiB, which fits in L2 together with the row tile.
constexpr uint32_t kQueryGroupBlocks = 8;
// Query lanes of the portable fallback loop.
constexpr uint32_t kScalarLanes = 16;

struct AlignedFloatFree {
  void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], AlignedFloatFree>;

AlignedFloats allocateFloats(size_t count) {
  const size_t bytes = std::max<size_t>(64, (count * sizeof(float) + 63) / 64 * 64);
  auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes);
  return AlignedFloats(p);
}

struct WorkItem {
  uint32_t chunk;
  uint32_t beginRow;  // global row indices
  uint32_t endRow;
};

// Everything one thread touches while scanning: its own top-k lists (merged at
// the end), thresholds mirrored as plain floats for the vector compare, and
// tile scratch. Nothing here is shared, so the hot loop takes no locks.
struct SlotState {
  bool ready = false;
  std::vector<TopKCollector> collectors;
  AlignedFloats thresholds;  // padded to whole query blocks; padding lanes +inf
  std::vector<const void*> rowPointers;
  std::vector<uint32_t> rowIndices;
  AlignedFloats decodedTile;  // fp16 rows widened for the packed kernel
};

struct SinkContext {
  const SearchRequest* request;
  const RowId* ids;
  const IndexTime* validFrom;
  const IndexTime* validTo;
  SlotState* slot;
  const uint32_t* rowIndices;
  uint32_t queryBase;
};

// Decides, for a row that beat some query's current k-th score, whether it is a
// candidate for that query (time filter and exclusions) and keeps it.
void offerCandidates(void* opaque, uint32_t rowSlot, uint32_t laneMask, const float* scores) {
  auto& context = *static_cast<SinkContext*>(opaque);
  const uint32_t row = context.rowIndices[rowSlot];
  if (row == kNoRow) return;  // padding row of a partial group
  const RowId id = context.ids[row];
  const IndexTime from = context.validFrom[row];
  const IndexTime to = context.validTo[row];
  const SearchRequest& request = *context.request;
  while (laneMask != 0) {
    const uint32_t lane = static_cast<uint32_t>(__builtin_ctz(laneMask));
    laneMask &= laneMask - 1;
    const uint32_t query = context.queryBase + lane;
    if (query >= request.queryCount) continue;
    const IndexTime asOf = request.asOf[query];
    if (asOf < from || asOf >= to) continue;
    if (isExcluded(request, query, id)) continue;
    TopKCollector& collector = context.slot->collectors[query];
    if (collector.offer(scores[lane], id) && collector.full()) {
      context.slot->thresholds.get()[query] = collector.threshold();
    }
  }
}

// Portable loop with the same contract as the AVX2 kernels.
void scanScalar(const float* queries, uint32_t queryCount, uint32_t dimension, const void* const* rows,
                uint32_t rowCount, bool rowsAreHalf, const float* thresholds, CandidateSink sink, void* context) {
  std::vector<float> widened(rowsAreHalf ? dimension : 0);
  float scores[kScalarLanes];
  for (uint32_t slot = 0; slot < rowCount; ++slot) {
    const float* row = static_cast<const float*>(rows[slot]);
    if (rowsAreHalf) {
      const auto* half = static_cast<const uint16_t*>(rows[slot]);
      for (uint32_t i = 0; i < dimension; ++i) widened[i] = halfBitsToFloat(half[i]);
      row = widened.data();
    }
    uint32_t laneMask = 0;
    for (uint32_t g = 0; g < queryCount; ++g) {
      const float* query = queries + static_cast<size_t>(g) * dimension;
      float sum = 0.0f;
      for (uint32_t i = 0; i < dimension; ++i) sum += query[i] * row[i];
      scores[g] = sum;
      if (sum >= thresholds[g]) laneMask |= 1u << g;
    }
    if (laneMask != 0) sink(context, slot, laneMask, scores);
  }
}

enum class ScanPlan { PackedAvx2, RowDotAvx2, Scalar };

}  // namespace

void CpuSearchBackend::search(const FlatVectorStore& store, const SearchRequest& request, SearchResults& results) {
  const uint32_t queryCount = request.queryCount;
  const uint32_t k = request.k;
  const uint32_t d = store.dimension();
  results.reset(queryCount, k);
  if (queryCount == 0 || k == 0 || store.rowCount() == 0) return;

  const bool half = store.storage() == Storage::Fp16;
  const size_t rowBytes = store.rowBytes();
  const CpuKernel kernel = request.cpuKernel == CpuKernel::Avx2 && cpuSupportsAvx2Fma() ? CpuKernel::Avx2 : CpuKernel::Scalar;
  ScanPlan plan = ScanPlan::Scalar;
#if defined(CHRONOQL_HAVE_AVX2_KERNELS)
  if (kernel == CpuKernel::Avx2) plan = queryCount >= 8 ? ScanPlan::PackedAvx2 : ScanPlan::RowDotAvx2;
#else
  (void)kernel;
#endif

  // Rows outside [min asOf, max asOf] of the whole batch cannot be a candidate
  // for any query and are skipped before scoring.
  IndexTime minAsOf = request.asOf[0];
  IndexTime maxAsOf = request.asOf[0];
  for (uint32_t q = 1; q < queryCount; ++q) {
    minAsOf = std::min(minAsOf, request.asOf[q]);
    maxAsOf = std::max(maxAsOf, request.asOf[q]);
  }

  const uint32_t blockCount = (queryCount + kPackedQueryLanes - 1) / kPackedQueryLanes;
  const uint32_t paddedQueries = blockCount * kPackedQueryLanes;
  AlignedFloats packed;
  if (plan == ScanPlan::PackedAvx2) {
    // Interleave each block of 16 queries as [dimension][16] so one aligned
    // pair of loads fetches all 16 queries' values for one dimension.
    packed = allocateFloats(static_cast<size_t>(paddedQueries) * d);
    for (uint32_t q = 0; q < queryCount; ++q) {
      float* block = packed.get() + static_cast<size_t>(q / kPackedQueryLanes) * d * kPackedQueryLanes;
      const float* source = request.queries + static_cast<size_t>(q) * d;
      for (uint32_t i = 0; i < d; ++i) block[static_cast<size_t>(i) * kPackedQueryLanes + q % kPackedQueryLanes] = source[i];
    }
  }

  std::vector<WorkItem> items;
  const auto& chunks = store.chunks();
  for (uint32_t c = 0; c < chunks.size(); ++c) {
    const uint32_t begin = chunks[c].firstRow;
    const uint32_t end = begin + chunks[c].rows;
    for (uint32_t row = begin; row < end; row += kWorkItemRows) {
      items.push_back(WorkItem{c, row, std::min(end, row + kWorkItemRows)});
    }
  }

  ThreadPool& pool = ThreadPool::shared();
  const uint64_t work = static_cast<uint64_t>(store.rowCount()) * queryCount * d;
  const size_t maxSlots = work < kParallelThreshold ? 1 : pool.concurrency();
  std::vector<SlotState> slots(std::min<size_t>(maxSlots, items.size()));

  const RowId* ids = store.ids();
  const IndexTime* validFrom = store.validFrom();
  const IndexTime* validTo = store.validTo();
  const uint8_t* deleted = store.deleted();

  auto scanItem = [&](size_t slotIndex, size_t itemIndex) {
    SlotState& slot = slots[slotIndex];
    if (!slot.ready) {
      slot.collectors.resize(queryCount);
      for (auto& collector : slot.collectors) collector.reset(k);
      slot.thresholds = allocateFloats(paddedQueries);
      for (uint32_t q = 0; q < paddedQueries; ++q) {
        slot.thresholds.get()[q] = q < queryCount ? -std::numeric_limits<float>::infinity()
                                                  : std::numeric_limits<float>::infinity();
      }
      slot.rowPointers.resize(kTileRows + kPackedRowGroup);
      slot.rowIndices.resize(kTileRows + kPackedRowGroup);
      if (half && plan == ScanPlan::PackedAvx2) slot.decodedTile = allocateFloats(static_cast<size_t>(kTileRows) * d);
      slot.ready = true;
    }

    const WorkItem& item = items[itemIndex];
    const RowChunk& chunk = chunks[item.chunk];
    const char* chunkBase = static_cast<const char*>(chunk.data.get());
    SinkContext context{&request, ids, validFrom, validTo, &slot, slot.rowIndices.data(), 0};

    // Large batches are taken in groups of query blocks small enough to stay
    // in L2 next to the row tile; each group re-reads the item's rows, which
    // by then mostly come from L3.
    const uint32_t groupBlocks = plan == ScanPlan::PackedAvx2 ? kQueryGroupBlocks : blockCount;
    for (uint32_t firstBlock = 0; firstBlock < blockCount; firstBlock += groupBlocks) {
      const uint32_t endBlock = std::min(blockCount, firstBlock + groupBlocks);
      for (uint32_t tileBegin = item.beginRow; tileBegin < item.endRow; tileBegin += kTileRows) {
        const uint32_t tileEnd = std::min(item.endRow, tileBegin + kTileRows);
        uint32_t rowCount = 0;
        for (uint32_t row = tileBegin; row < tileEnd; ++row) {
          if (deleted[row] || validFrom[row] > maxAsOf || validTo[row] <= minAsOf) continue;
          slot.rowIndices[rowCount] = row;
          slot.rowPointers[rowCount] = chunkBase + static_cast<size_t>(row - chunk.firstRow) * rowBytes;
          ++rowCount;
        }
        if (rowCount == 0) continue;

        switch (plan) {
#if defined(CHRONOQL_HAVE_AVX2_KERNELS)
          case ScanPlan::PackedAvx2: {
            if (half) {
              for (uint32_t i = 0; i < rowCount; ++i) {
                float* target = slot.decodedTile.get() + static_cast<size_t>(i) * d;
                halfToFloatAvx2(static_cast<const uint16_t*>(slot.rowPointers[i]), target, d);
                slot.rowPointers[i] = target;
              }
            }
            // Pad to whole row groups with a harmless repeat of the last row;
            // its kNoRow index makes the sink ignore it.
            uint32_t padded = rowCount;
            while (padded % kPackedRowGroup != 0) {
              slot.rowPointers[padded] = slot.rowPointers[rowCount - 1];
              slot.rowIndices[padded] = kNoRow;
              ++padded;
            }
            const auto* rowsAsFloats = reinterpret_cast<const float* const*>(slot.rowPointers.data());
            for (uint32_t block = firstBlock; block < endBlock; ++block) {
              context.queryBase = block * kPackedQueryLanes;
              scanPackedQ16Avx2(packed.get() + static_cast<size_t>(block) * d * kPackedQueryLanes, d, rowsAsFloats,
                                padded, slot.thresholds.get() + context.queryBase, offerCandidates, &context);
            }
            break;
          }
          case ScanPlan::RowDotAvx2:
            for (uint32_t first = 0; first < queryCount; first += kRowDotMaxQueries) {
              context.queryBase = first;
              scanRowDotAvx2(request.queries + static_cast<size_t>(first) * d,
                             std::min(kRowDotMaxQueries, queryCount - first), d, slot.rowPointers.data(), rowCount, half,
                             slot.thresholds.get() + first, offerCandidates, &context);
            }
            break;
#endif
          default:
            for (uint32_t first = 0; first < queryCount; first += kScalarLanes) {
              context.queryBase = first;
              scanScalar(request.queries + static_cast<size_t>(first) * d, std::min(kScalarLanes, queryCount - first),
                         d, slot.rowPointers.data(), rowCount, half, slot.thresholds.get() + first, offerCandidates,
                         &context);
            }
            break;
        }
      }
    }
  };
  pool.parallelFor(items.size(), slots.size(), scanItem);

  // Merge the per-thread lists; each holds at most k hits per query.
  std::vector<Hit> merged;
  for (uint32_t q = 0; q < queryCount; ++q) {
    merged.clear();
    for (const SlotState& slot : slots) {
      if (!slot.ready) continue;
      const auto& hits = slot.collectors[q].hits();
      merged.insert(merged.end(), hits.begin(), hits.end());
    }
    sortAndTruncate(merged, k);
    const size_t base = static_cast<size_t>(q) * k;
    for (size_t i = 0; i < merged.size(); ++i) {
      results.ids[base + i] = merged[i].id;
      results.scores[base + i] = merged[i].score;
    }
    results.counts[q] = static_cast<uint32_t>(merged.size());
  }
}

static std::atomic<uint64_t> gStreamChecksum{0};

double measureHostStreamSeconds(const FlatVectorStore& store) {
  struct Span {
    const char* data;
    size_t bytes;
  };
  std::vector<Span> spans;
  constexpr size_t kSpanBytes = 8u << 20;
  for (const auto& chunk : store.chunks()) {
    const size_t bytes = static_cast<size_t>(chunk.rows) * store.rowBytes();
    for (size_t offset = 0; offset < bytes; offset += kSpanBytes) {
      spans.push_back(Span{static_cast<const char*>(chunk.data.get()) + offset, std::min(kSpanBytes, bytes - offset)});
    }
  }
  std::atomic<uint64_t> sink{0};
  ThreadPool& pool = ThreadPool::shared();
  const auto start = std::chrono::steady_clock::now();
  pool.parallelFor(spans.size(), pool.concurrency(), [&](size_t, size_t i) {
    uint64_t sum = 0;
#if defined(CHRONOQL_HAVE_AVX2_KERNELS)
    if (cpuSupportsAvx2Fma()) {
      sum = streamReadAvx2(spans[i].data, spans[i].bytes);
    } else
#endif
    {
      const auto* words = reinterpret_cast<const uint64_t*>(spans[i].data);
      for (size_t w = 0; w < spans[i].bytes / 8; ++w) sum += words[w];
    }
    sink.fetch_add(sum, std::memory_order_relaxed);
  });
  const auto end = std::chrono::steady_clock::now();
  // Publishing the sum keeps the reads from being optimised away.
  gStreamChecksum.store(sink.load(), std::memory_order_relaxed);
  return std::chrono::duration<double>(end - start).count();
}

double SearchBackend::measureStreamSeconds(const FlatVectorStore& store) { return measureHostStreamSeconds(store); }

}  // namespace chronoql
