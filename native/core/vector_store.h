// Host-side storage of an exact (flat) vector index: rows of dimension d in
// fp32 or fp16, each with an external id, a validity interval [validFrom,
// validTo) in index time (int32) and a deleted flag.
//
// Rows live in exact-size chunks rather than one growing buffer: appending a
// batch never copies the existing matrix and never leaves doubling slack, which
// keeps memory at N*d*elementSize plus a few percent. Small trailing chunks are
// coalesced so that one-row-at-a-time adds still scan as long contiguous runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <vector>

#include "types.h"

namespace chronoql {

struct AlignedFree {
  void operator()(void* p) const;
};

struct RowChunk {
  std::unique_ptr<void, AlignedFree> data;  // rows * dim elements, 64-byte aligned
  uint32_t firstRow = 0;                    // global row index of the chunk's first row
  uint32_t rows = 0;
};

// Open-addressing map from external id to row index. A slot stores only the
// row index; the key is read back from the ids array, so a slot costs 4 bytes.
class IdToRowMap {
 public:
  void clear();
  uint32_t find(RowId id, const RowId* ids) const;  // kNoRow when absent
  void assign(RowId id, uint32_t row, const RowId* ids);  // inserts or repoints
  void reserveFor(size_t entries, const RowId* ids);
  size_t memoryBytes() const { return slots_.capacity() * sizeof(uint32_t); }
  size_t size() const { return used_; }

 private:
  size_t slotFor(RowId id) const;
  void rehash(size_t capacity, const RowId* ids);
  std::vector<uint32_t> slots_;
  size_t used_ = 0;
};

class FlatVectorStore {
 public:
  FlatVectorStore(uint32_t dimension, Storage storage, Metric metric);

  uint32_t dimension() const { return dimension_; }
  Storage storage() const { return storage_; }
  Metric metric() const { return metric_; }
  size_t rowBytes() const { return static_cast<size_t>(dimension_) * bytesPerElement(storage_); }

  // All rows ever appended (deleted ones included): the extent a scan covers.
  uint32_t rowCount() const { return static_cast<uint32_t>(ids_.size()); }
  // Rows not deleted.
  size_t liveCount() const { return liveRows_; }
  size_t memoryBytes() const;

  // --- Appending in two phases -------------------------------------------
  // A batch validated and encoded into storage format, not yet visible.
  struct PreparedRows {
    std::vector<RowId> ids;
    std::vector<IndexTime> validFrom;
    std::vector<IndexTime> validTo;
    std::unique_ptr<void, AlignedFree> rows;  // count * rowBytes()
    size_t count = 0;
  };
  // Validates the batch on its own (finite values, non-zero norm for cosine,
  // validFrom < validTo, ids unique within the batch) and encodes it. Reads
  // only immutable settings, so it runs without the lock while searches go
  // on. Throws std::invalid_argument naming the argument.
  PreparedRows prepare(const RowId* ids, const float* vectors, const IndexTime* validFrom, const IndexTime* validTo,
                       size_t count) const;
  // Makes prepared rows visible (caller holds the exclusive lock). Throws,
  // changing nothing, when an id is already live.
  void commit(PreparedRows&& rows);

  // --- Mutations (caller holds the exclusive lock) -------------------------
  // prepare() + commit() in one call.
  void append(const RowId* ids, const float* vectors, const IndexTime* validFrom, const IndexTime* validTo, size_t count);
  // Same, for rows already in storage format, written by `fillRows(first, n,
  // destination)` (used by load; no normalisation). Intervals are not checked
  // because invalidate() may legitimately have emptied one before a save.
  void appendEncoded(const RowId* ids, const IndexTime* validFrom, const IndexTime* validTo, size_t count,
                     const std::function<void(size_t first, size_t n, void* destination)>& fillRows);
  // Marks rows deleted; returns how many live rows were affected.
  size_t remove(const RowId* ids, size_t count);
  // Sets validTo of live rows (a version superseded at that day); returns count.
  size_t invalidate(const RowId* ids, const IndexTime* validTo, size_t count);
  // Bumped by remove/invalidate so device mirrors know to refresh metadata.
  uint64_t metadataVersion() const { return metadataVersion_; }

  // --- Read access (caller holds at least the shared lock) -----------------
  const std::vector<RowChunk>& chunks() const { return chunks_; }
  const RowId* ids() const { return ids_.data(); }
  const IndexTime* validFrom() const { return validFrom_.data(); }
  const IndexTime* validTo() const { return validTo_.data(); }
  const uint8_t* deleted() const { return deleted_.data(); }
  const void* rowData(uint32_t row) const;  // pointer to the encoded row
  uint32_t findLiveRow(RowId id) const;     // kNoRow if absent or deleted

  std::shared_mutex& mutex() const { return mutex_; }

 private:
  void encodeRow(const float* source, double norm, void* destination) const;
  void checkBatchIds(const RowId* ids, size_t count) const;
  void checkNotLive(const RowId* ids, size_t count) const;
  void link(const RowId* ids, const IndexTime* validFrom, const IndexTime* validTo, size_t count,
            std::unique_ptr<void, AlignedFree> encodedRows,
            const std::function<void(size_t first, size_t n, void* destination)>& fillRows);
  template <typename T>
  void growMetadata(std::vector<T>& vec, size_t needed);

  uint32_t dimension_;
  Storage storage_;
  Metric metric_;
  std::vector<RowChunk> chunks_;
  std::vector<RowId> ids_;
  std::vector<IndexTime> validFrom_;
  std::vector<IndexTime> validTo_;
  std::vector<uint8_t> deleted_;
  IdToRowMap idToRow_;
  size_t liveRows_ = 0;
  uint64_t metadataVersion_ = 0;
  mutable std::shared_mutex mutex_;
};

// Unit-length copy of a vector (double-precision norm, element-wise division),
// the same arithmetic the store applies to rows under the cosine metric.
void normaliseInto(const float* source, uint32_t dimension, float* destination);  // throws on zero norm
bool allFinite(const float* values, size_t count);

}  // namespace chronoql
